# Sourced, not run: the build flags the scripts share, so two scripts that build the same products
# use the same flags (a build with other flags recompiles every module: minutes of CI's time) and
# cannot drift apart.
#
#   debug_flags     scripts/test.sh's debug build: warnings are errors, Swift's and the C shims'
#   release_flags   CI's release build of the tests and tools (.ci/run); -enable-testing so the
#                   release tests can reach internal declarations. scripts/bench.sh builds its
#                   own release products without it, as users' release builds are.
# shellcheck disable=SC2034  # used by the scripts that source this file
debug_flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
# shellcheck disable=SC2034
release_flags=(-c release -Xswiftc -enable-testing -Xswiftc -warnings-as-errors)
