# Warnings are set per target (never globally) so that consumers of our headers are not affected.
function(bubblesim_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
                         -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2)
  if(BUBBLESIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
