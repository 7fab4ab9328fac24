# parity_static_libpython(<found>): the target parity_static_libpython, the configured interpreter's static libpython.
#
# The parity executable spends most of its start, and a worker most of its time, in libpython. The shared library
# is position-independent code; the static archive beside the interpreter (sysconfig's LIBPL/LIBRARY, Debian's
# libpython3.X-dev) is not, and linked into a position-dependent executable it runs `import numpy` in about 12%
# fewer instructions (callgrind: 337 against 381 million), which is why Debian links its own python3 that way.
# Extension modules (NumPy's, a candidate's) find the C API in the executable: every symbol of the archive is linked
# and the C API (Py*, _Py*, all that the shared library exports) exported. Without an archive, or with
# PARITY_STATIC_LIBPYTHON off or PARITY_SANITIZE on, <found> is OFF and the executable links the shared library.
function(parity_static_libpython found)
  set(${found} OFF PARENT_SCOPE)
  if(NOT PARITY_STATIC_LIBPYTHON OR PARITY_SANITIZE)
    return()
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c [=[
import sysconfig
v = sysconfig.get_config_var
print(v("LIBPL") or "", v("LIBRARY") or "", " ".join(filter(None, (v("LIBS"), v("SYSLIBS"), v("MODLIBS")))), sep=";")
]=]
    OUTPUT_VARIABLE config RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(LENGTH config fields)
  if(failed OR NOT fields EQUAL 3)
    message(STATUS "parity: ${Python_EXECUTABLE} names no static libpython: the parity executable links the shared one")
    return()
  endif()
  list(GET config 0 libpl)
  list(GET config 1 library)
  list(GET config 2 libs)
  set(archive "${libpl}/${library}")
  if(NOT library MATCHES "\\.a$" OR NOT EXISTS "${archive}")
    message(STATUS "parity: no static libpython at ${archive}: the parity executable links the shared one")
    return()
  endif()
  separate_arguments(libs UNIX_COMMAND "${libs}")
  add_library(parity_static_libpython INTERFACE)
  target_link_libraries(parity_static_libpython INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${archive}>" ${libs})
  target_link_options(parity_static_libpython INTERFACE -no-pie
                      "LINKER:--dynamic-list=${PROJECT_SOURCE_DIR}/cmake/python_exports.list")
  message(STATUS "parity: the parity executable links ${archive}")
  set(${found} ON PARENT_SCOPE)
endfunction()
