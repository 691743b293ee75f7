#!/usr/bin/env bash
# Prepares, on this machine, what the device check carries to a lent GPU machine (which has
# torch and transformers but not agentgym's other dependencies, and no network):
# build/gpu-carry (git-ignored) with agentgym's wheel built from HEAD (not the working tree:
# other work in progress stays out), the wheels of the dependencies the machine's image lacks
# (for its Python 3.12), and the shape folder (SmolLM2-135M's config and tokenizer, no weights).
# Then: run(command="bash tests/perf/device_run.sh", carry=["build/gpu-carry"], timeout_s=540).
set -euo pipefail
cd "$(dirname "$0")/../.."
carry=build/gpu-carry
shape=${SHAPE:-$HOME/.cache/agentgym/models/smollm2-135m-instruct}
rm -rf "$carry" && mkdir -p "$carry/wheels" "$carry/shape"
.venv/bin/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 -d "$carry/wheels" \
    gymnasium==1.4.0 pettingzoo==1.27.0 farama-notifications==0.0.6
source=$(mktemp -d)
git archive HEAD | tar -x -C "$source"
.venv/bin/pip wheel --quiet --no-deps --no-build-isolation --no-index -w "$carry/wheels" "$source"
rm -rf "$source"
for name in config.json generation_config.json chat_template.jinja tokenizer.json tokenizer_config.json; do
    cp "$shape/$name" "$carry/shape/"
done
git rev-parse HEAD >"$carry/commit"
du -sh "$carry"
