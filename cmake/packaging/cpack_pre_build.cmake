# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on the staged files of each package
# before it is built. The .deb gets zsh's completion where Debian's zsh looks
# for packaged completions (vendor-completions; site-functions under /usr is
# not on its fpath) and the lintian overrides, with their reasons, that
# lintian reads from usr/share/lintian/overrides/PACKAGE.
if(CPACK_GENERATOR STREQUAL "DEB")
  foreach(root IN LISTS CPACK_TEMPORARY_INSTALL_DIRECTORY)
    set(share ${root}/usr/share)
    if(EXISTS ${share}/zsh/site-functions/_fleetreap)
      file(MAKE_DIRECTORY ${share}/zsh/vendor-completions ${share}/lintian/overrides)
      file(RENAME ${share}/zsh/site-functions/_fleetreap ${share}/zsh/vendor-completions/_fleetreap)
      file(REMOVE_RECURSE ${share}/zsh/site-functions)
      file(COPY_FILE ${CPACK_FLEETREAP_LINTIAN_OVERRIDES} ${share}/lintian/overrides/fleetreap)
    endif()
  endforeach()
endif()
