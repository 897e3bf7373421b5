# UOT_MPI: AUTO builds uot-mpi where CMake's FindMPI finds an MPI for C++
# (Debian: libopenmpi-dev), ON requires it, OFF never looks. Sets UOT_HAVE_MPI
# and, for the tests, MPIEXEC_EXECUTABLE.
set(UOT_HAVE_MPI OFF)
if(NOT UOT_MPI STREQUAL "OFF")
  if(UOT_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(UOT_HAVE_MPI ON)
  elseif(UOT_MPI STREQUAL "ON")
    message(FATAL_ERROR "UOT_MPI=ON but no MPI for C++ was found (Debian: apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()
