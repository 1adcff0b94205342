/// TLS, proxy and redirect trust settings, as curl's `--cacert`, `-k`, `--proxy`,
/// `--proxy-insecure` and `--location-trusted` mean them.
///
/// Without a proxy here, libcurl reads `http_proxy`, `https_proxy`, `all_proxy` and
/// `no_proxy` itself, exactly as the `curl` tool does (sdfetch(1) ENVIRONMENT).
public struct ConnectionOptions: Sendable, Equatable {
    /// A PEM bundle of certificate authorities trusted instead of the system's.
    public var caCertificateFile: String?
    /// Skip verifying the server's certificate and name (`-k`): TLS still encrypts.
    public var isInsecure = false
    /// Proxy URL (`http://host:port`, `socks5h://...`), used for every request.
    public var proxy: String?
    /// Skip verifying an HTTPS proxy's certificate (`--proxy-insecure`); `-k` leaves it on.
    public var isProxyInsecure = false
    /// `--location-trusted`: `-H` headers follow redirects to other hosts, ports and schemes.
    public var trustsRedirectHosts = false

    public init(
        caCertificateFile: String? = nil, isInsecure: Bool = false, proxy: String? = nil,
        isProxyInsecure: Bool = false, trustsRedirectHosts: Bool = false
    ) {
        self.caCertificateFile = caCertificateFile
        self.isInsecure = isInsecure
        self.proxy = proxy
        self.isProxyInsecure = isProxyInsecure
        self.trustsRedirectHosts = trustsRedirectHosts
    }
}
