#!/bin/sh
# `npx interpreter ARGS` from the npm prefix the tests installed into (NPX_PREFIX, NPX_CACHE),
# run from the current folder: an agent command as an editor would configure it.
exec npx --prefix "$NPX_PREFIX" --offline --cache "$NPX_CACHE" interpreter "$@"
