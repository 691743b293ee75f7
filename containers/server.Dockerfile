# The env-server images: `agentgym serve-env` in a container, agentgym/server:latest and one
# image per heavy family (agentgym/web, agentgym/swe, agentgym/gui). One recipe for all of them;
# what differs is in agentgym/sandbox/server_images.py (SERVER_IMAGES): the Debian packages
# (PACKAGES), the agentgym extras whose wheels are in the context, the base and the user.
#
# Built offline by `agentgym containers build --image NAME`, never by hand: the build context is
# made by that command in $AGENTGYM_CACHE/containers/NAME and holds
#   wheels/    every third-party wheel the image needs, resolved under constraints.txt by
#              `pip download` on the host (the same versions as the development venv),
#   agentgym/  the wheel of this checkout,
# so nothing inside the build talks to PyPI. apt-get reaches Debian's mirror through the
# build's host network (`docker build --network host`), as for the sandbox image.
#
# Three stages, so the image holds neither the wheels nor a second copy of the venv: `system`
# (Python and the family's Debian packages), `venv` (the venv built from the wheels; its
# dependency layer stays cached while wheels/ is unchanged, so a new checkout rebuilds only the
# agentgym layer), and the image itself (`system` plus the venv).
ARG BASE=agentgym/rootfs:bookworm

FROM ${BASE} AS system
ARG PACKAGES=""
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates ${PACKAGES} \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

FROM system AS venv
COPY wheels/ /tmp/wheels/
RUN python3 -m venv /opt/agentgym \
 && /opt/agentgym/bin/pip install --no-index --no-deps --no-cache-dir /tmp/wheels/*.whl
COPY agentgym/ /tmp/agentgym/
RUN /opt/agentgym/bin/pip install --no-index --no-deps --no-cache-dir /tmp/agentgym/*.whl

FROM system
ARG USER=agentgym
COPY --from=venv /opt/agentgym /opt/agentgym
RUN if [ "${USER}" != root ]; then useradd --create-home --shell /bin/sh "${USER}"; fi
USER ${USER}
ENV PATH=/opt/agentgym/bin:${PATH} PYTHONUNBUFFERED=1
LABEL org.opencontainers.image.title="agentgym env server" \
      org.opencontainers.image.description="agentgym serve-env on Debian 12 (docs/remote.md)"
EXPOSE 8765
# Arguments after the image name are ids and options; a later --host or --port wins.
ENTRYPOINT ["agentgym", "serve-env", "--host", "0.0.0.0", "--port", "8765"]
