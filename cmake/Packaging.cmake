# The Debian package: `cpack -G DEB` in the build directory (or
# `cmake --build build --target package`) makes rtsql_<version>_<arch>.deb from
# the install rules: /usr/bin/rtsqld and rtsql (stripped), the man pages, the
# documentation and examples under /usr/share/doc/rtsql, the configuration
# file /etc/rtsql/rtsqld.conf (a conffile: dpkg keeps an administrator's
# edits) and the unit /lib/systemd/system/rtsqld.service. The maintainer
# scripts in deploy/debian/ create the rtsql system user and enable and start
# the unit where systemd runs (docs/operations.md, "Installing").

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "rtsql")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "streaming SQL server speaking the PostgreSQL protocol")
set(CPACK_PACKAGE_DESCRIPTION
    "rtsqld runs SQL flows over Kafka topics continuously, with state, checkpoints\n\
and exactly-once sinks; any PostgreSQL client connects to it. rtsql is its shell.")
set(RTSQL_PACKAGE_MAINTAINER "rtsql maintainers <rtsql@localhost>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${RTSQL_PACKAGE_MAINTAINER}")

# Paths in the package are the install rules' paths under /usr, whatever the
# build tree's CMAKE_INSTALL_PREFIX. cpack installs with prefix /usr and
# DESTDIR set to its staging directory, so that cmake/InstallSystemFiles.cmake
# sees the /usr prefix and writes /etc and /lib/systemd.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "database")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Depends: the shared libraries rtsqld and rtsql link, as dpkg-shlibdeps finds
# them (libpython, librdkafka, librocksdb, libssl, libpq, libedit, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# And the zone files time zones are read from (common/time_zone.cpp), which
# libdate-tz reads at run time rather than links.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "tzdata")
# gzip: xz costs seconds more for a few megabytes less.
set(CPACK_DEBIAN_COMPRESSION_TYPE "gzip")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/deploy/debian/conffiles"
    "${PROJECT_SOURCE_DIR}/deploy/debian/postinst"
    "${PROJECT_SOURCE_DIR}/deploy/debian/prerm"
    "${PROJECT_SOURCE_DIR}/deploy/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
