# pkg_flags(<out_var> <args>...): runs `pkg-config <args> libsched` with PKG_CONFIG_PATH set to
# the installed prefix's pkgconfig directory and returns the flags as a list. Fails the test on
# any pkg-config error. Needs PKG_CONFIG, PREFIX, LIBDIR.
function(pkg_flags out)
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} libsched OUTPUT_VARIABLE flags ERROR_VARIABLE perr
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config ${ARGN} libsched failed (${rc}): ${perr}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
