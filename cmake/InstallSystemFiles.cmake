# Install-time script (install(SCRIPT) in the top-level CMakeLists.txt): puts
# rtsqld's configuration file and systemd unit where the system looks for them.
#
# The place depends on the prefix given at install time (cmake --install
# --prefix, or cpack's /usr), which the configure step does not know:
#   prefix /usr:   /etc/rtsql/rtsqld.conf, /lib/systemd/system/rtsqld.service
#                  (Debian's places; the .deb is built this way)
#   other prefix:  <prefix>/etc/rtsql/rtsqld.conf,
#                  <prefix>/lib/systemd/system/rtsqld.service, whose paths are
#                  rewritten to <prefix>/bin/rtsqld and <prefix>/etc/rtsql
# file(INSTALL) puts $DESTDIR in front of both, as for every other file.
#
# An existing configuration file is kept: an administrator's edits survive a
# second `cmake --install` (dpkg does the same for the package's conffile).

if(NOT RTSQL_DEPLOY_DIR)
  message(FATAL_ERROR "InstallSystemFiles.cmake needs RTSQL_DEPLOY_DIR")
endif()

if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(etc_dir "/etc/rtsql")
  set(unit_dir "/lib/systemd/system")
  set(unit_file "${RTSQL_DEPLOY_DIR}/systemd/rtsqld.service")
else()
  set(etc_dir "${CMAKE_INSTALL_PREFIX}/etc/rtsql")
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  file(READ "${RTSQL_DEPLOY_DIR}/systemd/rtsqld.service" unit)
  string(REPLACE "/usr/bin/rtsqld" "${CMAKE_INSTALL_PREFIX}/bin/rtsqld" unit "${unit}")
  string(REPLACE "/etc/rtsql/" "${etc_dir}/" unit "${unit}")
  string(REPLACE "file:/usr/share/doc/" "file:${CMAKE_INSTALL_PREFIX}/share/doc/" unit "${unit}")
  string(MD5 prefix_hash "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(unit_file "${RTSQL_BINARY_DIR}/install-system-files/${prefix_hash}/rtsqld.service")
  file(WRITE "${unit_file}" "${unit}")
endif()

set(conf "$ENV{DESTDIR}${etc_dir}/rtsqld.conf")
if(EXISTS "${conf}")
  message(STATUS "Keeping: ${conf}")
else()
  file(INSTALL DESTINATION "${etc_dir}" TYPE FILE FILES "${RTSQL_DEPLOY_DIR}/rtsqld.conf")
endif()
file(INSTALL DESTINATION "${unit_dir}" TYPE FILE FILES "${unit_file}")
