# Warnings are set per target (never globally) so that consumers of our headers are not affected.
function(bubblesim_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
                         -Woverloaded-virtual -Wdouble-promotion -Wformat=2
                         # GCC 12 at -O3 reports std::string members of aggregates built in
                         # initializer lists as maybe-uninitialized and std::string moves as
                         # potential null dereferences (known false positives; -Wnull-dereference
                         # is left out for the same reason).
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  if(BUBBLESIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
