# require_same_files(A B WHAT): every file in folder A is in folder B with the same bytes (and A has some).
# Included by same_output.cmake and resume.cmake; WHAT opens the failure message.
function(require_same_files a b what)
  file(GLOB files LIST_DIRECTORIES false RELATIVE "${a}" "${a}/*")
  if(NOT files)
    message(FATAL_ERROR "${what}: no files to compare in ${a}")
  endif()
  foreach(f IN LISTS files)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}/${f}" "${b}/${f}" RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${what}: ${f} differs")
    endif()
  endforeach()
endfunction()
