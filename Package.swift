// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "sdfetch",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sdfetch", targets: ["sdfetch"]),
        .library(name: "SDFetchCore", targets: ["SDFetchCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2")
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng16",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        // giflib ships no .pc upstream; the module map links "gif" directly.
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"])]
        ),
        // zlib for the PNG structure walk (the same library libpng links).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libwebp and its demuxer (animations): `--verify full` and `--resize`.
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]
        ),
        // OpenSSL's libcrypto for SHA-256: the library libcurl links already.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // hiredis for `redis://` remote caches. No pkgConfig: Debian's hiredis.pc adds
        // -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a warning on every build.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // libavif (with the AV1 decoders Debian builds it with): `--verify full` and `--resize`.
        // No pkgConfig: libavif.pc's -DAVIF_DLL is a flag SwiftPM refuses (with a warning);
        // the header is in /usr/include and the module map links "avif" directly.
        .systemLibrary(
            name: "CAvif",
            providers: [.apt(["libavif-dev"])]
        ),
        .target(
            name: "CSDFetchShims",
            dependencies: ["CCurl", "CJPEG"]
        ),
        .target(
            name: "SDFetchCore",
            dependencies: [
                "CCurl", "CPNG", "CJPEG", "CGIF", "CZlib", "CWebP", "CAvif", "CCrypto", "CHiredis", "CSDFetchShims",
            ]
        ),
        .executableTarget(
            name: "sdfetch",
            dependencies: ["SDFetchCore", "CSDFetchShims"]
        ),
        .target(
            name: "SDFetchTestSupport",
            dependencies: [
                "SDFetchCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The tests, split by cost (the README's paragraph for developers): in-process units,
        // integration through loopback servers and the built binary, and the stress suites (kill
        // storms, bombs, silent hosts, timed behaviour) that CI always runs and `make test` leaves out.
        .testTarget(
            name: "SDFetchUnitTests",
            dependencies: ["sdfetch", "SDFetchCore", "SDFetchTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "SDFetchStressTests",
            dependencies: ["sdfetch", "SDFetchCore", "SDFetchTestSupport"]
        ),
        .testTarget(
            name: "SDFetchCoreTests",
            dependencies: ["SDFetchCore", "SDFetchTestSupport"]
        ),
        .testTarget(
            name: "sdfetchTests",
            dependencies: ["sdfetch", "SDFetchCore", "SDFetchTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
