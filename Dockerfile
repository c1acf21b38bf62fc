# Multi-stage build: a static-ish release binary on a small non-root runtime image.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin wafuel && strip target/release/wafuel

FROM debian:bookworm-slim
# CA roots for HTTPS to FuelWatch and Google; curl for the health check.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /var/lib/wafuel --create-home wafuel \
    && install -d -o wafuel -g wafuel /var/lib/wafuel/data
# The store's directory exists, owned by the service's user, so a named volume mounted there
# (`docker run -v wafuel-data:/var/lib/wafuel/data`) starts owned by it too.
VOLUME /var/lib/wafuel/data
COPY --from=build /src/target/release/wafuel /usr/local/bin/wafuel
USER wafuel
WORKDIR /var/lib/wafuel
# glibc malloc arenas: the binary starts itself again with two per core unless this is set
# (src/malloc.rs says why); a container's cores are the host's, so the number is set here.
ENV WAFUEL_LISTEN=0.0.0.0:8080 \
    WAFUEL_ADMIN_LISTEN=0.0.0.0:9090 \
    WAFUEL_STORE=sqlite:///var/lib/wafuel/data/wafuel.sqlite3 \
    WAFUEL_LOG_FORMAT=json \
    MALLOC_ARENA_MAX=4
EXPOSE 8080 9090
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:9090/readyz || exit 1
ENTRYPOINT ["wafuel"]
CMD ["serve"]
