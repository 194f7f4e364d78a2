"""A small client of the Kinesis API for the tests, over plain HTTP and JSON:
kinesalite (scripts/kinesalite.sh) checks no signature, but wants an
Authorization header. It makes streams, puts records, reshards and reads a
shard back, so that a test can compare rtsql's rows with what the service
holds."""

import base64
import json
import time
import urllib.error
import urllib.request


class KinesisError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class Kinesalite:
    def __init__(self, endpoint):
        self.endpoint = endpoint.rstrip("/")

    def call(self, action, body, timeout=10):
        req = urllib.request.Request(
            self.endpoint + "/", data=json.dumps(body).encode(), method="POST",
            headers={
                "Content-Type": "application/x-amz-json-1.1",
                "X-Amz-Target": f"Kinesis_20131202.{action}",
                "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/kinesis/"
                                 "aws4_request, SignedHeaders=host, Signature=0",
            })
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                text = res.read()
        except urllib.error.HTTPError as e:
            raise KinesisError(e.code, e.read().decode(errors="replace")) from None
        return json.loads(text) if text else {}

    def wait_active(self, stream, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = self.call("DescribeStreamSummary", {"StreamName": stream})
            if d["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE":
                return
            time.sleep(0.1)
        raise AssertionError(f"stream {stream} not ACTIVE within {timeout}s")

    def create_stream(self, stream, shards):
        self.call("CreateStream", {"StreamName": stream, "ShardCount": shards})
        self.wait_active(stream)

    def shards(self, stream):
        return self.call("ListShards", {"StreamName": stream})["Shards"]

    def put(self, stream, data, key, explicit_hash_key=None):
        """Puts one record; returns its ShardId and SequenceNumber."""
        body = {"StreamName": stream, "PartitionKey": key,
                "Data": base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()}
        if explicit_hash_key is not None:
            body["ExplicitHashKey"] = str(explicit_hash_key)
        return self.call("PutRecord", body)

    def put_records(self, stream, records):
        """Puts (data, key) pairs in one PutRecords; returns its entries
        (ShardId and SequenceNumber of each, in order). Fails on any refused one."""
        body = {"StreamName": stream, "Records": [
            {"PartitionKey": key,
             "Data": base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()}
            for data, key in records]}
        out = self.call("PutRecords", body)
        assert out.get("FailedRecordCount", 0) == 0, out
        return out["Records"]

    def split(self, stream, shard_id, new_starting_hash_key):
        self.call("SplitShard", {"StreamName": stream, "ShardToSplit": shard_id,
                                 "NewStartingHashKey": str(new_starting_hash_key)})
        self.wait_active(stream)

    def read_shard(self, stream, shard_id):
        """Every record of a shard, from its start to the end of what it holds."""
        it = self.call("GetShardIterator", {"StreamName": stream, "ShardId": shard_id,
                                            "ShardIteratorType": "TRIM_HORIZON"})["ShardIterator"]
        out = []
        for _ in range(1000):
            page = self.call("GetRecords", {"ShardIterator": it, "Limit": 10000})
            out.extend(page["Records"])
            it = page.get("NextShardIterator")
            if not it or (not page["Records"] and page.get("MillisBehindLatest", 0) == 0):
                break
        return out


def endpoint_or_skip():
    """The endpoint of kinesalite (RTSQL_KINESIS_ENDPOINT, set by .ci/run): a
    skip where it is not set, a failure under CI."""
    from conftest import service_or_skip
    return service_or_skip("RTSQL_KINESIS_ENDPOINT", "scripts/kinesalite.sh start")
