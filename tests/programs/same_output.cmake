# Runs a program twice in two fresh folders and compares what it printed and the files it wrote.
#   cmake -DPROGRAM=… -DARGS="--seed=7" -DWORKDIR=… -P same_output.cmake
#       requires byte-identical stdout and files (the SVGs) from two runs with the same arguments;
#   … -DARGS_OTHER="--seed=8"
#       then runs a third time, with ARGS_OTHER, and requires its stdout to differ from the first's, so that
#       the same bytes twice cannot come from printing constants;
#   … -DARGS_B="--seed=8"
#       runs the second time with ARGS_B instead and requires the stdout to differ;
#   … -DARGS_B="--quick;ladder" -DSAME=ON
#       requires byte-identical output from two spellings of the same command.
if(NOT DEFINED ARGS_B)
  set(ARGS_B "${ARGS}")
  set(SAME ON)
endif()
# run(name args…): the program in a fresh ${WORKDIR}/<name>, its stdout in ${WORKDIR}/<name>.stdout
function(run name)
  file(REMOVE_RECURSE "${WORKDIR}/${name}")
  file(MAKE_DIRECTORY "${WORKDIR}/${name}")
  execute_process(COMMAND "${PROGRAM}" ${ARGN} WORKING_DIRECTORY "${WORKDIR}/${name}"
                  RESULT_VARIABLE rc OUTPUT_FILE "${WORKDIR}/${name}.stdout")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN} exited with ${rc}")
  endif()
endfunction()
# other_numbers(name args): the run's stdout is not the first run's. The programs echo their seed ("seed 7");
# compared without it, so only the numbers can differ.
function(other_numbers name args)
  file(READ "${WORKDIR}/a.stdout" out_a)
  file(READ "${WORKDIR}/${name}.stdout" out_b)
  string(REGEX REPLACE "seed [0-9]+" "seed N" out_a "${out_a}")
  string(REGEX REPLACE "seed [0-9]+" "seed N" out_b "${out_b}")
  if(out_a STREQUAL out_b)
    message(FATAL_ERROR "${PROGRAM} printed the same numbers for '${ARGS}' and '${args}'")
  endif()
endfunction()

run(a ${ARGS})
run(b ${ARGS_B})
if(NOT SAME)
  other_numbers(b "${ARGS_B}")
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORKDIR}/a.stdout" "${WORKDIR}/b.stdout" RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} printed different output for '${ARGS}' and '${ARGS_B}'")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/compare_files.cmake)
require_same_files("${WORKDIR}/a" "${WORKDIR}/b" "${PROGRAM} with '${ARGS}' and '${ARGS_B}'")
if(NOT "${ARGS_OTHER}" STREQUAL "")
  run(other ${ARGS_OTHER})
  other_numbers(other "${ARGS_OTHER}")
endif()
