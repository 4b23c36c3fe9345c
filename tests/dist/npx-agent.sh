#!/bin/sh
# An agent command as an editor configures it, run from the current folder:
#   NPX_PACKAGE set: `npx -y $NPX_PACKAGE ARGS` (the registry from npm_config_registry);
#   else: `npx interpreter ARGS` from the npm prefix the tests installed into (NPX_PREFIX).
# NPX_CACHE is npm's cache folder.
if [ -n "${NPX_PACKAGE:-}" ]; then
  exec npx -y --cache "$NPX_CACHE" "$NPX_PACKAGE" "$@"
fi
exec npx --prefix "$NPX_PREFIX" --offline --cache "$NPX_CACHE" interpreter "$@"
