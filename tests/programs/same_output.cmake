# Runs a program twice in two fresh folders and compares what it printed and the files it wrote.
#   cmake -DPROGRAM=… -DARGS="--seed=7" -DWORKDIR=… -P same_output.cmake
#       requires byte-identical stdout and files (the SVGs) from two runs with the same arguments;
#   … -DARGS_B="--seed=8"
#       runs the second time with ARGS_B instead and requires the stdout to differ, so that the first
#       form cannot pass by printing constants;
#   … -DARGS_B="--quick;ladder" -DSAME=ON
#       requires byte-identical output from two spellings of the same command.
if(NOT DEFINED ARGS_B)
  set(ARGS_B "${ARGS}")
  set(SAME ON)
endif()
foreach(run a b)
  set(args "${ARGS}")
  if(run STREQUAL "b")
    set(args "${ARGS_B}")
  endif()
  file(REMOVE_RECURSE "${WORKDIR}/${run}")
  file(MAKE_DIRECTORY "${WORKDIR}/${run}")
  execute_process(COMMAND "${PROGRAM}" ${args} WORKING_DIRECTORY "${WORKDIR}/${run}"
                  RESULT_VARIABLE rc OUTPUT_FILE "${WORKDIR}/${run}.stdout")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${args} exited with ${rc}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORKDIR}/a.stdout" "${WORKDIR}/b.stdout" RESULT_VARIABLE diff)
if(NOT SAME)
  # The programs echo their seed ("seed 7"); compare what is left, so only the numbers can differ.
  file(READ "${WORKDIR}/a.stdout" out_a)
  file(READ "${WORKDIR}/b.stdout" out_b)
  string(REGEX REPLACE "seed [0-9]+" "seed N" out_a "${out_a}")
  string(REGEX REPLACE "seed [0-9]+" "seed N" out_b "${out_b}")
  if(out_a STREQUAL out_b)
    message(FATAL_ERROR "${PROGRAM} printed the same numbers for '${ARGS}' and '${ARGS_B}'")
  endif()
  return()
endif()
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} printed different output for '${ARGS}' and '${ARGS_B}'")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/compare_files.cmake)
require_same_files("${WORKDIR}/a" "${WORKDIR}/b" "${PROGRAM} with '${ARGS}' and '${ARGS_B}'")
