/* hg_version: the library's version, from the CMake project version (HG_VERSION_TEXT). */
#include "hopgen/status.h"

#ifndef HG_VERSION_TEXT
#error "HG_VERSION_TEXT (the project version) is defined by CMakeLists.txt"
#endif

const char *hg_version(void) {
  return HG_VERSION_TEXT;
}
