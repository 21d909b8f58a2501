#!/usr/bin/env bash
# Compiles every TypeScript block of README.md, docs/*.md and libs/outbox/README.md (typescript-docs-verifier), each block on
# its own, as a user would paste it: a block needs its imports, and one that does not compile fails
# the run naming the file and the block. `@nest-outbox/outbox` resolves to the package's built dist/
# through its package.json exports (the tool runs from libs/outbox for that), so a snippet that
# imports a name the package does not export fails too.
#
# docs/tutorial.md and docs/prisma.md are left out: their blocks are their example app's own files
# (embedded from examples/tutorial and examples/prisma by `npm run docs:verify`, and compiled by
# test/tutorial and test/examples, which build apps from them), and import each other by relative paths.
# docs/several-outboxes.md is compiled here except its blocks of examples/several-outboxes, marked
# `<!-- ts-docs-verifier:ignore -->` for the same reason (test/examples/several-outboxes-app builds them).
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent build:lib >/dev/null

files=(../../README.md README.md)   # the repository's README and the package's
for file in docs/*.md; do
  [[ "$file" == docs/tutorial.md || "$file" == docs/prisma.md ]] || files+=("../../$file")
done
cd libs/outbox
npx typescript-docs-verifier --project tsconfig.docs.json --input-files "${files[@]}"
