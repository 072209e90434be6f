# Writes OUTPUT, a C++ file that defines fleetreap::kGitCommit (version.h),
# from the git checkout at SOURCE_DIR: the commit's 12-digit hash, with
# "-dirty" when tracked files differ from it, or "unknown" when SOURCE_DIR is
# not the top of a git checkout (a release tarball, even one unpacked inside
# another repository) or git is missing. Run at every build
# (cmake -DSOURCE_DIR=... -DOUTPUT=... -P git_commit.cmake); OUTPUT is
# rewritten only when its text changes, so an unchanged commit rebuilds nothing.
set(commit unknown)
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
  endif()
  if(rc EQUAL 0 AND top STREQUAL source)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE hash RESULT_VARIABLE rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND hash MATCHES "^[0-9a-f]+$")
      set(commit ${hash})
      # --no-optional-locks: never takes .git/index.lock from a git command
      # the user runs meanwhile.
      execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR}
                              status --porcelain --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
      if(rc EQUAL 0 AND NOT changes STREQUAL "")
        set(commit ${hash}-dirty)
      endif()
    endif()
  endif()
endif()

set(text "// Generated at every build by cmake/git_commit.cmake. Do not edit.
#include \"fleetreap/version.h\"

namespace fleetreap {
const char kGitCommit[] = \"${commit}\";
}  // namespace fleetreap
")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
