# The parley image for people who build with Docker. `make image` builds the same image without a Docker daemon.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/parley ./cmd/parley && \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/parley-operator ./cmd/parley-operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/parley /out/parley-operator /
USER 65532:65532
ENTRYPOINT ["/parley"]
