# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on the staged files of each package
# before it is built. The RPM gets zsh's completion where RHEL's zsh looks
# (site-functions, not Debian's vendor-completions) and no lintian overrides.
if(CPACK_GENERATOR STREQUAL "RPM")
  foreach(root IN LISTS CPACK_TEMPORARY_INSTALL_DIRECTORY)
    set(share ${root}/usr/share)
    if(EXISTS ${share}/zsh/vendor-completions/_fleetreap)
      file(MAKE_DIRECTORY ${share}/zsh/site-functions)
      file(RENAME ${share}/zsh/vendor-completions/_fleetreap ${share}/zsh/site-functions/_fleetreap)
      file(REMOVE_RECURSE ${share}/zsh/vendor-completions ${share}/lintian)
    endif()
  endforeach()
endif()
