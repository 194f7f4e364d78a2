// placeholder, replaced by the layer's sources
