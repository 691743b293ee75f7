# The base sandbox image: agentgym/sandbox:latest, the docker backend's default image.
#
# Built offline by `agentgym containers build`: BASE is agentgym/rootfs:bookworm, a
# `debootstrap --variant=minbase bookworm` tree imported with `docker import` (no registry is
# needed); apt-get below reaches Debian's mirror through the build's host network.
#
# What code in the sandbox gets: Debian 12's Python 3.11 as `python` and `python3` (with pip
# and venv, no third-party packages), git, gcc/g++/make (build-essential), and the usual
# command-line tools. Containers from this image run with no network at all.
ARG BASE=agentgym/rootfs:bookworm
FROM ${BASE}

ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-pip python3-venv python-is-python3 \
      git build-essential ca-certificates \
      procps psmisc less file patch diffutils xz-utils bzip2 unzip zip jq \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

LABEL org.opencontainers.image.title="agentgym sandbox base" \
      org.opencontainers.image.description="Debian 12 + Python 3.11, git, build-essential"

WORKDIR /work
CMD ["/bin/bash"]
