# uot_set_warnings(target): the project's warning set, errors when UOT_WARNINGS_AS_ERRORS.
function(uot_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${UOT_WARNINGS_AS_ERRORS}>>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${UOT_WARNINGS_AS_ERRORS}>>:-Werror=all-warnings -Xcompiler=-Werror>)
endfunction()
