// The one Catch2 main shared by every Ridge test program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
