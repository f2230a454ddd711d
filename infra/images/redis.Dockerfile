# A stand-in for the official redis image where it cannot be pulled (infra/images/README): Debian's
# redis-server; like that image, a `redis-server …` command listens on every interface with
# protected mode off (the container network is the boundary).
#   podman build -f infra/images/redis.Dockerfile --build-arg BASE_IMAGE=localhost/volley-node:<v> -t localhost/volley/redis:7 infra/images
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
EXPOSE 6379
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
