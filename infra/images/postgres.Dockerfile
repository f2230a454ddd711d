# A stand-in for the official postgres image where it cannot be pulled (infra/images/README): Debian's
# PostgreSQL 15 with the part of that image's entrypoint compose.yaml uses — POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB create the role and database on first start — and pg_isready.
#   podman build -f infra/images/postgres.Dockerfile --build-arg BASE_IMAGE=localhost/volley-node:<v> -t localhost/volley/postgres:15 infra/images
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
