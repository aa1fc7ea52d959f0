# Runs one section program and checks its exit code and output.
#   cmake -DPROGRAM=… -DARGS="a;b" -DWORKDIR=… -DEXPECT_RC=0 [-DEXPECT_STDOUT=regex] [-DEXPECT_STDERR=regex]
#         -P run_program.cmake
#   -DKEEP_MODELS=ON also passes --save checkpoints: the trained models are kept under WORKDIR/checkpoints for the
#   claim tests that would train them again (tests/chapters/program_models.hpp). Saving prints nothing, and
#   command.txt names the program's own flags only.
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(run_args ${ARGS})
if(KEEP_MODELS)
  list(APPEND run_args --save checkpoints)
endif()
execute_process(COMMAND "${PROGRAM}" ${run_args} WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# Kept for tools/claims_md.py, which writes CLAIMS.md from the _runs tests' output.
get_filename_component(name "${PROGRAM}" NAME)
string(REPLACE ";" " " args_text "${ARGS}")
file(WRITE "${WORKDIR}/stdout.txt" "${out}")
file(WRITE "${WORKDIR}/command.txt" "${name} ${args_text}\n")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: stdout does not match '${EXPECT_STDOUT}'\nstdout:\n${out}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: stderr does not match '${EXPECT_STDERR}'\nstderr:\n${err}")
endif()
