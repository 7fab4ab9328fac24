# The parity executable's static libpython, where the configured interpreter has one that links (below).

# The Python C API the executable exports to extension modules (cmake/python_exports.list), beside this file.
set(PARITY_PYTHON_EXPORTS "${CMAKE_CURRENT_LIST_DIR}/python_exports.list")

# parity_static_libpython_links(<archive> <libs> <result>): whether a program that starts Python links against the
# whole `archive` and `libs` as parity_static_libpython would link it (-no-pie), so that an archive the configured
# Python's sysconfig describes wrongly falls back to the shared library at configure time instead of failing the build.
function(parity_static_libpython_links archive libs result)
  set(source "${CMAKE_CURRENT_BINARY_DIR}/parity_static_libpython_links.cc")
  file(WRITE "${source}" "#include <Python.h>\nint main() { Py_Initialize(); return Py_FinalizeEx(); }\n")
  try_compile(links SOURCES "${source}" NO_CACHE CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${Python_INCLUDE_DIRS}"
              LINK_OPTIONS -no-pie LINK_LIBRARIES -Wl,--whole-archive "${archive}" -Wl,--no-whole-archive ${libs}
              OUTPUT_VARIABLE output)
  if(NOT links)
    string(REGEX MATCHALL "[^\n]*(error|undefined reference|cannot find)[^\n]*" errors "${output}")
    list(SUBLIST errors 0 3 errors)
    list(JOIN errors "\n  " errors)
    message(STATUS "parity: a program linking ${archive} failed:\n  ${errors}")
  endif()
  set(${result} ${links} PARENT_SCOPE)
endfunction()

# parity_static_libpython(<found>): the target parity_static_libpython, the configured interpreter's static
# libpython.
#
# The parity executable spends most of its start, and a worker most of its time, in libpython. The shared library
# is position-independent code; the static archive beside the interpreter (sysconfig's LIBPL/LIBRARY, Debian's
# libpython3.X-dev) is not, and linked into a position-dependent executable it runs `import numpy` in about 12%
# fewer instructions (callgrind: 337 against 381 million), which is why Debian links its own python3 that way.
# Extension modules (NumPy's, a candidate's) find the C API in the executable: every symbol of the archive is linked
# and the C API (Py*, _Py*, all that the shared library exports) exported. Without an archive, with one that a
# program starting Python does not link against (parity_static_libpython_links), or with PARITY_STATIC_LIBPYTHON off
# or PARITY_SANITIZE on, <found> is OFF and the executable links the shared library.
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
  # A relative path among them names a file of CPython's own build tree, which no installed Python has: Ubuntu 24.04's
  # 3.12 lists Modules/_hacl/libHacl_Hash_SHA2.a, which the linker took for -lModules/... and failed on (scripts/
  # gpu_check.sh on an H200, 2026-12-04). The link below decides whether the archive links without it.
  set(build_tree_paths ${libs})
  list(FILTER build_tree_paths INCLUDE REGEX "^[^-/].*/")  # a bare word (a flag's argument) stays
  list(REMOVE_ITEM libs ${build_tree_paths})
  if(build_tree_paths)
    list(JOIN build_tree_paths " " dropped)
    message(STATUS "parity: left out of libpython's libraries, paths of CPython's build tree: ${dropped}")
  endif()
  parity_static_libpython_links("${archive}" "${libs}" links)
  if(NOT links)
    list(JOIN libs " " shown)
    message(STATUS "parity: ${archive} does not link with its libraries (${shown}): the parity executable links the "
                   "shared libpython")
    return()
  endif()
  add_library(parity_static_libpython INTERFACE)
  target_link_libraries(parity_static_libpython INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${archive}>" ${libs})
  target_link_options(parity_static_libpython INTERFACE -no-pie
                      "LINKER:--dynamic-list=${PARITY_PYTHON_EXPORTS}")
  message(STATUS "parity: the parity executable links ${archive}")
  set(${found} ON PARENT_SCOPE)
endfunction()
