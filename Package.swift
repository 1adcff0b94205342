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
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
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
                "CCurl", "CPNG", "CJPEG", "CGIF", "CZlib", "CWebP", "CAvif", "CSDFetchShims",
                .product(name: "Crypto", package: "swift-crypto"),
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
        .testTarget(
            name: "SDFetchCoreTests",
            dependencies: ["SDFetchCore", "SDFetchTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "sdfetchTests",
            dependencies: [
                "sdfetch", "SDFetchCore", "SDFetchTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
