# A run stopped and resumed prints what an unstopped run prints, and writes the same pictures:
#   cmake -DPROGRAM=… -DARGS="ladder;--quick" -DSTEPS=40 -DWORKDIR=… -P resume.cmake
# runs ARGS --steps STEPS (whole); ARGS --steps STEPS/2 --save ckpt (half); then, in a third folder,
# ARGS --steps STEPS --resume <half's ckpt> (resumed); and requires resumed's stdout and files to equal
# whole's byte for byte.
math(EXPR half "${STEPS} / 2")
set(ckpt "${WORKDIR}/half/ckpt")
foreach(run whole half resumed)
  file(REMOVE_RECURSE "${WORKDIR}/${run}")
  file(MAKE_DIRECTORY "${WORKDIR}/${run}")
endforeach()
set(cmd_whole ${ARGS} --steps ${STEPS})
set(cmd_half ${ARGS} --steps ${half} --save ${ckpt})
set(cmd_resumed ${ARGS} --steps ${STEPS} --resume ${ckpt})
foreach(run whole half resumed)
  execute_process(COMMAND "${PROGRAM}" ${cmd_${run}} WORKING_DIRECTORY "${WORKDIR}/${run}"
                  RESULT_VARIABLE rc OUTPUT_FILE "${WORKDIR}/${run}.stdout" ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${cmd_${run}} exited with ${rc}:\n${err}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORKDIR}/whole.stdout" "${WORKDIR}/resumed.stdout" RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${PROGRAM}: ${cmd_resumed} printed other output than ${cmd_whole}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/compare_files.cmake)
require_same_files("${WORKDIR}/whole" "${WORKDIR}/resumed" "${PROGRAM}: the resumed run against the whole run")
