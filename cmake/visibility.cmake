# probkit_hide_symbols(target): compile `target`'s C++ and CUDA hidden by
# default, inline member functions included, so that a shared libprobkit
# exports only what include/probkit/export.hpp marks PROBKIT_API. Every object
# that goes into the library is compiled so (src/, cpu/, cuda/).
function(probkit_hide_symbols target)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
