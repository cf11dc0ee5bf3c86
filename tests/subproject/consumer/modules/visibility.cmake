# The project's own module named as one of probkit's (cmake/visibility.cmake):
# probkit must include its own by path, not find this one.
message(FATAL_ERROR "add_subdirectory(probkit) included the project's own visibility.cmake")
