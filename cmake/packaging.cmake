# What `cmake --install` puts where, and the .deb and .rpm that
# `cmake --build build --target package` makes from it (CPack, reusing the
# normal build). Included by the top-level CMakeLists.txt; the packaging's
# own files (copyright, changelog, lintian overrides) are in cmake/packaging/.
# Paths are relative to the prefix: /usr in the packages, /usr/local for a
# plain `cmake --install build`.

set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(FLEETREAP_DOC_DIR share/doc/fleetreap)

install(TARGETS fleetreap RUNTIME DESTINATION bin)
# The Slurm node epilog and prolog (README "Slurm"), which find
# PREFIX/bin/fleetreap from PREFIX/libexec/fleetreap, the sweep batch script
# and the drain helper.
install(PROGRAMS contrib/slurm/fleetreap-epilog contrib/slurm/fleetreap-prolog
        contrib/slurm/fleetreap-sweep.sbatch contrib/slurm/fleetreap-drain
        DESTINATION libexec/fleetreap)
install(DIRECTORY playbooks/ DESTINATION share/fleetreap/playbooks)
install(DIRECTORY inventory/ DESTINATION share/fleetreap/inventory)
# Templates an operator copies and edits: the Kubernetes manifests, the CI
# jobs (README "Kubernetes", "From CI") and the sweep's systemd units
# (docs/sweep.md); the gate script stays executable.
install(DIRECTORY contrib/k8s contrib/ci contrib/systemd DESTINATION share/fleetreap/contrib
        USE_SOURCE_PERMISSIONS)
# The README and docs/ (the report's format and its JSON schema, the
# protected daemons...), without the man pages' sources.
install(FILES README.md DESTINATION ${FLEETREAP_DOC_DIR})
install(DIRECTORY docs/ DESTINATION ${FLEETREAP_DOC_DIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json" PATTERN "man" EXCLUDE)
install(FILES cmake/packaging/copyright DESTINATION ${FLEETREAP_DOC_DIR})

# Man pages and the changelog, compressed as Debian wants them (gzip -9n: no
# name, no time stamp, so the package is reproducible).
set(FLEETREAP_GZIPPED)
foreach(source docs/man/fleetreap.1 docs/man/fleetreap-merge.1 cmake/packaging/changelog)
  get_filename_component(name ${source} NAME)
  set(gz ${CMAKE_BINARY_DIR}/gz/${name}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gz
    COMMAND sh -c "gzip -9nc \"$1\" > \"$2\"" sh ${CMAKE_SOURCE_DIR}/${source} ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/${source}
    VERBATIM)
  list(APPEND FLEETREAP_GZIPPED ${gz})
endforeach()
add_custom_target(fleetreap_gzipped ALL DEPENDS ${FLEETREAP_GZIPPED})
install(FILES ${CMAKE_BINARY_DIR}/gz/fleetreap.1.gz ${CMAKE_BINARY_DIR}/gz/fleetreap-merge.1.gz
        DESTINATION share/man/man1)
install(FILES ${CMAKE_BINARY_DIR}/gz/changelog.gz DESTINATION ${FLEETREAP_DOC_DIR})

# Shell completion, where bash-completion and zsh look under any prefix
# (zsh: site-functions, which RHEL's /usr and Debian's /usr/local use); the
# .deb moves zsh's file to Debian's vendor-completions and adds the lintian
# overrides (cmake/packaging/cpack_pre_build.cmake).
install(FILES contrib/completion/fleetreap.bash
        DESTINATION share/bash-completion/completions RENAME fleetreap)
install(FILES contrib/completion/_fleetreap DESTINATION share/zsh/site-functions)

# The packages this machine can make: the .deb where dpkg-shlibdeps is (it
# computes the library dependencies), the .rpm where rpmbuild is (Debian's
# rpm package; on RHEL, build there so the libraries' names are RHEL's).
find_program(FLEETREAP_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(FLEETREAP_RPMBUILD rpmbuild)
set(CPACK_GENERATOR)
if(FLEETREAP_DPKG_SHLIBDEPS)
  list(APPEND CPACK_GENERATOR DEB)
endif()
if(FLEETREAP_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()
if(NOT CPACK_GENERATOR)
  set(CPACK_GENERATOR TGZ)
endif()
set(CPACK_PACKAGE_NAME fleetreap)
set(CPACK_PACKAGE_VENDOR "fleetreap")
set(CPACK_PACKAGE_CONTACT "fleetreap maintainers <fleetreap-maintainers@lists.fleetreap.dev>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://fleetreap.dev/")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "empties every GPU of a fleet of hosts before a rollout")
set(CPACK_PACKAGE_DESCRIPTION
    "fleetreap finds the processes that hold NVIDIA device files on every host
of an Ansible inventory, over SSH and in parallel, or on this machine, and
runs an escalation ladder: stop systemd units, SIGTERM, SIGKILL, re-scan for
stragglers and restarted workers, remove /dev/shm leftovers, verify with
nvidia-smi. It never signals the protected daemons of GPU nodes
(nvidia-persistenced, DCGM, the fabric manager, the Kubernetes GPU agents)
and reports host by host (table, JSON, JUnit, Markdown) with exit codes a CI
job can gate a rollout on.

Also included: the Slurm epilog, prolog and sweep, Kubernetes manifests, CI
jobs, playbooks and example inventories.")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS ${CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS})
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_SOURCE_DIR}/cmake/packaging/cpack_pre_build.cmake)
set(CPACK_FLEETREAP_LINTIAN_OVERRIDES ${CMAKE_SOURCE_DIR}/cmake/packaging/lintian-overrides)

# Debian: fleetreap_VERSION_ARCH.deb; the libraries from shlibdeps, and
# OpenSSH's client for ProxyJump (ssh -W) and ProxyCommand.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openssh-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# RPM: fleetreap-VERSION-1.ARCH.rpm; the libraries from rpmbuild's automatic
# requirements.
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_RELEASE 1)
set(CPACK_RPM_PACKAGE_LICENSE "Undeclared")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_URL ${CPACK_PACKAGE_HOMEPAGE_URL})
set(CPACK_RPM_PACKAGE_REQUIRES "openssh-clients")
# Directories that the distribution's own packages own.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/libexec /usr/share/man /usr/share/man/man1 /usr/share/bash-completion
    /usr/share/bash-completion/completions /usr/share/zsh /usr/share/zsh/site-functions)
include(CPack)
