internal import CCurl
internal import CSDFetchShims
import FoundationEssentials
import Glibc

/// One easy handle and everything curl writes into while a transfer runs on it.
///
/// Never `Sendable`: created, driven, recycled and destroyed on the ``CurlEngine`` loop
/// thread only. The loop keeps finished transfers and re-arms them for the next request
/// (`curl_easy_reset` keeps the handle's buffers), so a steady stream of requests
/// allocates little. curl's callbacks and `CURLINFO_PRIVATE` find the transfer through
/// an unretained pointer; the loop's table of running transfers keeps it alive meanwhile.
///
/// Proxies: unless `--proxy` is given, no proxy option is set, so libcurl itself reads
/// `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` exactly as the `curl` tool does
/// (sdfetch(1) ENVIRONMENT).
final class CurlTransfer {
    /// Why a body was cut on purpose by returning 0 from a callback.
    enum Overflow {
        /// A `2xx` body (declared or streamed) went past `maxBytes`: `too-large`.
        case tooLarge
        /// A non-`2xx` body went past `maxBytes`; its status says what happened.
        case discardedBody
        /// The body's spill file could not be written (`errno`): a local `io` failure.
        case spillFailed(Int32)
        /// The response names a coding the request did not offer (``ContentCoding``).
        case unofferedCoding(RefusedCoding)
    }

    let handle: UnsafeMutableRawPointer
    private(set) var id: UInt64 = 0
    private(set) var request = TransferRequest(url: "")
    private(set) var continuation: CheckedContinuation<TransferResponse, Never>?
    /// `--host-failures` for this request; 0 when host health is off.
    private(set) var hostFailureLimit = 0
    /// The key of this request's ``HostHealth`` and ``HostScheduler`` entries; empty when
    /// neither host health nor per-host pacing is on.
    private(set) var host = ""
    /// Monotonic nanoseconds of the start, or of the stall check that last saw new bytes.
    var lastActivity: UInt64 = 0
    /// Monotonic nanoseconds of the start.
    private(set) var startedAt: UInt64 = 0
    /// Bytes arrived since the last stall check. Callbacks only set this flag: the loop's
    /// check reads the clock once for all transfers instead of once per callback.
    var hasNewBytes = false
    private(set) var timeoutNanoseconds: UInt64 = 0
    /// Set by `CURLOPT_PREREQFUNCTION`: a connection was made (or reused) for this request.
    private(set) var isConnected = false
    /// The response came over HTTP/2 or later, so its host's connection multiplexes.
    var isMultiplexed: Bool {
        var version = 0
        _ = CSDFetch_curl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        return version >= Int(CURL_HTTP_VERSION_2_0)
    }
    /// `--limit-rate`'s bucket, asked before each body chunk; nil without a cap.
    var rateLimiter: RateLimiter?
    /// Where the pre-request callback reports sends, for `--wait`; nil without per-host rules.
    var sendLog: SendLog?
    /// The transfer is paused by ``rateLimiter``: no bytes can arrive, so it is not stalled.
    var isPausedForRate = false
    /// Monotonic nanoseconds at which the current ``LowSpeedLimit`` window began.
    var speedWindowStart: UInt64 = 0
    /// Head and body bytes received in the current window.
    var speedWindowBytes: Int64 = 0
    /// `--limit-rate` held the transfer back during the current window: its slowness is ours.
    var wasRateLimitedInWindow = false
    /// `errno` of a socket this machine could not create (`EMFILE`...); curl does not keep it.
    var socketError: Int32?
    /// The loop's record of sockets, told about each one this transfer opens.
    var sockets: SocketActivity?
    /// Ports of the connection curl sends on, from the pre-request callback (0 before).
    private(set) var localPort = 0
    private(set) var remotePort = 0

    var head = ResponseHead()
    /// The body in memory, or, once it outgrew ``SpilledBody/spillThreshold``, the bytes not
    /// yet written to `spillFile`.
    var body: [UInt8] = []
    /// The unnamed file a large body goes to (see ``SpilledBody``); -1 while in memory.
    var spillFile: Int32 = -1
    /// Bytes already written to `spillFile`.
    var spilledBytes: Int64 = 0
    /// `O_TMPFILE` failed for this body: it stays in memory rather than failing.
    var cannotSpill = false
    var discardedBytes: Int64 = 0
    var receivedBytes = false
    var overflow: Overflow?
    /// The request's ``TransferMeter``, kept here so the write callback reads one field.
    private var meter: TransferMeter?
    /// The body's first chunk was counted: its declared length went to ``meter``.
    private var isBodyMetered = false
    /// What this transfer told ``meter``: the declared length (0: none) and the bytes taken.
    private var meteredDeclared: Int64 = 0
    private var meteredBytes: Int64 = 0
    /// Told ``meter`` it waits for a response (connecting, or sent and not answered yet).
    private var isAwaitingResponse = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// `Proxy-Authorization` from `-H`: sent to the proxy only (`CURLOPT_PROXYHEADER`).
    private var proxyHeaderList: UnsafeMutablePointer<curl_slist>?
    /// The headers of a hop to another origin: the default `Accept` alone (see
    /// ``headersForHop()``); made on the first such hop.
    private var foreignHeaderList: UnsafeMutablePointer<curl_slist>?
    /// Whether `headerList` holds anything that must stay with the request's origin.
    private var hasOwnHeaders = false
    /// curl writes its message here; it lives as long as the handle.
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// The engine's count of open sockets, which every connection this handle makes keeps
    /// as its close callback's data (the engine's core outlives the connections).
    private let openSockets: OpenSocketCount

    init?(openSockets: OpenSocketCount) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.openSockets = openSockets
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        if spillFile >= 0 { close(spillFile) }
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        curl_slist_free_all(proxyHeaderList)
        curl_slist_free_all(foreignHeaderList)
        errorBuffer.deallocate()
    }

    static func from(userData: UnsafeMutableRawPointer?) -> CurlTransfer {
        guard let userData else { preconditionFailure("curl callback without its transfer") }
        return Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
    }

    // MARK: - Life cycle

    /// Arms the handle for `request`; next comes `curl_multi_add_handle`.
    func arm(
        id: UInt64, request: TransferRequest, hostFailureLimit: Int, host: String,
        continuation: CheckedContinuation<TransferResponse, Never>, now: UInt64
    ) {
        self.id = id
        self.request = request
        self.hostFailureLimit = hostFailureLimit
        self.host = host
        self.continuation = continuation
        meter = request.meter
        lastActivity = now
        startedAt = now
        speedWindowStart = now
        let timeout = request.timeout.components
        let nanoseconds = timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000
        timeoutNanoseconds = UInt64(max(1_000_000, nanoseconds))
        meter?.awaitStarted(deadline: now &+ timeoutNanoseconds)
        isAwaitingResponse = meter != nil
        configure()
    }

    /// Closes the connection when this transfer ends instead of keeping it for reuse (the
    /// handle's reset for its next request lifts it again).
    func closesConnectionWhenDone() {
        setLong(CURLOPT_FORBID_REUSE, 1)
    }

    /// Forgets the finished request and resets the handle for the next one.
    func recycle() {
        if isBodyMetered { meter?.transferEnded(declared: meteredDeclared, received: meteredBytes) }
        if isAwaitingResponse { meter?.awaitEnded() }
        isAwaitingResponse = false
        meter = nil
        isBodyMetered = false
        meteredDeclared = 0
        meteredBytes = 0
        curl_easy_reset(handle)
        curl_slist_free_all(headerList)
        headerList = nil
        curl_slist_free_all(proxyHeaderList)
        proxyHeaderList = nil
        hasOwnHeaders = false
        continuation = nil
        request = TransferRequest(url: "")
        host = ""
        hasNewBytes = false
        head = ResponseHead()
        body = []
        if spillFile >= 0 { close(spillFile) }
        spillFile = -1
        spilledBytes = 0
        cannotSpill = false
        discardedBytes = 0
        receivedBytes = false
        isConnected = false
        rateLimiter = nil
        sendLog = nil
        isPausedForRate = false
        speedWindowStart = 0
        speedWindowBytes = 0
        wasRateLimitedInWindow = false
        socketError = nil
        sockets = nil
        localPort = 0
        remotePort = 0
        overflow = nil
        errorBuffer[0] = 0
    }

    /// Records that `count` bytes arrived.
    private func touch(_ count: Int) {
        receivedBytes = true
        hasNewBytes = true
        speedWindowBytes &+= Int64(count)
    }

    // MARK: - Options

    private func configure() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        setLong(CURLOPT_NOSIGNAL, 1)
        setString(CURLOPT_URL, request.url)
        // The key keeps the path byte for byte (SDFetchCore.docc, Fetching, "URL identity"), so
        // the request must too: without this curl would collapse "/a/../b" and ask for another
        // resource.
        setLong(CURLOPT_PATH_AS_IS, 1)
        setString(CURLOPT_PROTOCOLS_STR, "http,https")
        setString(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // curl's --max-redirs: N hops are followed and one more fails; 0 allows none.
        setLong(CURLOPT_FOLLOWLOCATION, 1)
        setLong(CURLOPT_MAXREDIRS, max(0, request.maxRedirects))
        setLong(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // Over TLS, ALPN tells within the handshake whether a connection multiplexes (HTTP/2),
        // so waiting for it beats opening another. Never over plain HTTP: curl would hold
        // every other transfer to the host until the first response arrived.
        if request.url.hasPrefix("https:") { setLong(CURLOPT_PIPEWAIT, 1) }
        setString(CURLOPT_USERAGENT, request.userAgent)
        // A run resolves each host name once. With a timeout, libcurl prunes its DNS cache by
        // walking every entry at the end of every transfer: O(hosts) per URL, a tenth of the
        // loop thread's time on a list over 10,000 hosts. An entry per host name (about 200
        // bytes) is what the engine keeps per host anyway (``HostHealth``).
        setLong(CURLOPT_DNS_CACHE_TIMEOUT, -1)
        // Connection set-up is bounded here; a stall after it by the loop's stall check,
        // since curl's low-speed limit averages over seconds and would cut slow steady bodies.
        setLong(CURLOPT_CONNECTTIMEOUT_MS, Int(timeoutNanoseconds / 1_000_000))
        if let maxTime = request.maxTime {
            setLong(CURLOPT_TIMEOUT_MS, Int(min(maxTime.nanosecondsClamped / 1_000_000, UInt64(Int.max))))
        }
        // Decoded by curl; the write callback sees decoded bytes, so --max-bytes bounds the
        // decoded size. Only codings of bounded memory are offered (``ContentCoding``).
        if let offered = ContentCoding.offered { setString(CURLOPT_ACCEPT_ENCODING, offered) }
        configureConnection()
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_PRIVATE, context)

        configureHeaders()

        _ = CSDFetch_curl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, userData in
            CurlTransfer.from(userData: userData).receive(body: data, count: size * count)
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = CSDFetch_curl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, userData in
            CurlTransfer.from(userData: userData).receive(header: data, count: size * count)
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = CSDFetch_curl_easy_setopt_prereq_callback(handle, CURLOPT_PREREQFUNCTION) {
            userData, _, _, remotePort, localPort in
            let transfer = CurlTransfer.from(userData: userData)
            transfer.localPort = Int(localPort)
            transfer.remotePort = Int(remotePort)
            transfer.sendLog?.record(transfer.host, firstForTransfer: !transfer.isConnected)
            transfer.meter?.requestSent()
            if transfer.isConnected, transfer.hasOwnHeaders { transfer.headersForHop() }
            transfer.isConnected = true
            return 0  // CURL_PREREQFUNC_OK
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_PREREQDATA, context)
        _ = CSDFetch_curl_easy_setopt_opensocket_callback(handle, CURLOPT_OPENSOCKETFUNCTION) { userData, _, address in
            // What curl's default does, plus close-on-exec, and keeping errno on failure.
            let socketType = address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue)
            let descriptor = socket(address.pointee.family, socketType, address.pointee.protocol)
            let transfer = CurlTransfer.from(userData: userData)
            if descriptor < 0 {
                transfer.socketError = errno
            } else {
                transfer.openSockets.opened()
                transfer.sockets?.opened(descriptor)
            }
            return descriptor
        }
        _ = CSDFetch_curl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context)
        _ = CSDFetch_curl_easy_setopt_closesocket_callback(handle, CURLOPT_CLOSESOCKETFUNCTION) { count, descriptor in
            if let count { Unmanaged<OpenSocketCount>.fromOpaque(count).takeUnretainedValue().closed() }
            return close(descriptor)
        }
        _ = CSDFetch_curl_easy_setopt_pointer(
            handle, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(openSockets).toOpaque())
    }

    /// `-H` lines and the default `Accept`. `Proxy-Authorization` goes to the proxy alone
    /// (`CURLHEADER_SEPARATE`): an origin server never sees it. With `--location-trusted`,
    /// libcurl may also send `-H`'s `Authorization` and `Cookie` to another host
    /// (`CURLOPT_UNRESTRICTED_AUTH`), except for a URL with userinfo, whose password curl
    /// would then forward too.
    private func configureHeaders() {
        var hasAccept = false
        for line in request.headers {
            let name = Self.headerName(line)
            if name == "proxy-authorization" {
                proxyHeaderList = curl_slist_append(proxyHeaderList, line)
                continue
            }
            hasAccept = hasAccept || name == "accept"
            headerList = curl_slist_append(headerList, line)
            hasOwnHeaders = true
        }
        if !hasAccept { headerList = curl_slist_append(headerList, Self.defaultAccept) }
        setLong(CURLOPT_HEADEROPT, 1)  // CURLHEADER_SEPARATE, (1<<0): not imported
        _ = CSDFetch_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        if let proxyHeaderList { _ = CSDFetch_curl_easy_setopt_slist(handle, CURLOPT_PROXYHEADER, proxyHeaderList) }
        if request.connection.trustsRedirectHosts, !request.url.hasUserinfo {
            setLong(CURLOPT_UNRESTRICTED_AUTH, 1)
        }
    }

    /// Before each redirect hop (from the pre-request callback, before curl builds the
    /// request): the request's own headers for its origin, the default `Accept` alone for
    /// any other host, port or scheme unless `--location-trusted` (<doc:Security>).
    /// Conditional headers go too: the validators are the first origin's.
    private func headersForHop() {
        guard !request.connection.trustsRedirectHosts else { return }
        var url: UnsafePointer<CChar>?
        _ = CSDFetch_curl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &url)
        let isSameOrigin = url.map { Origin(String(cString: $0)) == Origin(request.url) } ?? false
        if !isSameOrigin, foreignHeaderList == nil {
            foreignHeaderList = curl_slist_append(nil, Self.defaultAccept)
        }
        _ = CSDFetch_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, isSameOrigin ? headerList : foreignHeaderList)
    }

    static let defaultAccept = "Accept: image/*,*/*;q=0.8"

    /// The lower-cased name of a `Name: value` line.
    private static func headerName(_ line: String) -> String {
        line.prefix { $0 != ":" }.trimmingBlanks().lowercased()
    }

    /// `--cacert`, `-k`, `--proxy-insecure`, `--proxy`.
    private func configureConnection() {
        let connection = request.connection
        // Trust comes from one bundle file (libcurl's default, or `--cacert`), never also from
        // the hashed folder Debian's libcurl names by default (`/etc/ssl/certs`, the same
        // certificates): with a folder set, libcurl builds a new certificate store for every
        // connection, parsing the whole bundle again, some 2-4 ms of CPU per new TLS host;
        // without, it builds one per run and reuses it (`CURLOPT_CA_CACHE_TIMEOUT`).
        _ = CSDFetch_curl_easy_setopt_string(handle, CURLOPT_CAPATH, nil)
        _ = CSDFetch_curl_easy_setopt_string(handle, CURLOPT_PROXY_CAPATH, nil)
        if let file = connection.caCertificateFile {
            setString(CURLOPT_CAINFO, file)
            setString(CURLOPT_PROXY_CAINFO, file)
        }
        if connection.isInsecure {
            setLong(CURLOPT_SSL_VERIFYPEER, 0)
            setLong(CURLOPT_SSL_VERIFYHOST, 0)
        }
        // The proxy's certificate apart, as curl's --proxy-insecure: -k trusts the origin
        // servers, not whatever sits between.
        if connection.isProxyInsecure {
            setLong(CURLOPT_PROXY_SSL_VERIFYPEER, 0)
            setLong(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
        }
        if let proxy = connection.proxy { setString(CURLOPT_PROXY, proxy) }
    }

    private func setLong(_ option: CURLoption, _ value: Int) {
        _ = CSDFetch_curl_easy_setopt_long(handle, option, value)
    }

    private func setString(_ option: CURLoption, _ value: String) {
        // curl copies string options (since 7.17), so a temporary C string is enough.
        _ = value.withCString { CSDFetch_curl_easy_setopt_string(handle, option, $0) }
    }

    // MARK: - Callbacks (loop thread, inside curl_multi_perform)

    /// Keeps a `2xx` body up to `maxBytes`; returning less than `count` aborts the transfer.
    private func receive(body data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        if let rateLimiter, !rateLimiter.admit(count, transfer: id) {
            isPausedForRate = true
            wasRateLimitedInWindow = true
            return Self.pauseWrite
        }
        touch(count)
        if let meter { meterBody(count, on: meter) }
        guard head.isSuccess else {
            // Other bodies are read and dropped so the connection stays reusable, but not forever.
            discardedBytes += Int64(count)
            if discardedBytes > request.maxBytes {
                overflow = .discardedBody
                return 0
            }
            return count
        }
        guard spilledBytes + Int64(body.count + count) <= request.maxBytes else {
            overflow = .tooLarge
            return 0
        }
        if body.isEmpty, spilledBytes == 0, let length = head.contentLength, length <= request.maxBytes {
            body.reserveCapacity(Int(min(length, Int64(SpilledBody.spillThreshold + Self.chunkAllowance))))
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        if body.count > SpilledBody.spillThreshold, !spill() { return 0 }
        return count
    }

    /// Tells `meter` about `count` bytes taken, and about the body's declared length on its
    /// first chunk: a relaxed atomic add per callback, no lock.
    private func meterBody(_ count: Int, on meter: TransferMeter) {
        if !isBodyMetered {
            isBodyMetered = true
            meteredDeclared = head.contentLength ?? 0
            meter.bodyStarted(declared: head.contentLength)
        }
        meteredBytes += Int64(count)
        meter.received(count)
    }

    /// Moves the bytes held in `body` to the spill file (created on the first call); false
    /// when the file cannot be written. Without `O_TMPFILE` the body stays in memory.
    private func spill() -> Bool {
        if spillFile < 0 {
            guard !cannotSpill, request.spillFolder >= 0, let fd = SpilledBody.create(in: request.spillFolder) else {
                cannotSpill = true
                return true
            }
            spillFile = fd
        }
        guard FileIO.writeAll(body, to: spillFile) else {
            overflow = .spillFailed(errno)
            return false
        }
        spilledBytes += Int64(body.count)
        body.removeAll(keepingCapacity: true)
        return true
    }

    /// The finished body as the response carries it: in memory, or its spill file (which
    /// the response then owns).
    func takeBody() -> (bytes: [UInt8], spilled: SpilledBody?)? {
        guard spillFile >= 0 else { return (body, nil) }
        guard spill() else { return nil }
        let spilled = SpilledBody(fd: spillFile, count: spilledBytes)
        spillFile = -1
        return ([], spilled)
    }

    /// Parses a header line; a declared `2xx` body over `maxBytes` is refused before it starts.
    private func receive(header data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        touch(count)
        if isAwaitingResponse {
            isAwaitingResponse = false
            meter?.awaitEnded()
        }
        head.consume(UnsafeRawBufferPointer(start: data, count: count))
        if head.isSuccess, let length = head.contentLength, length > request.maxBytes {
            overflow = .tooLarge
            return 0
        }
        // Refused before curl decodes a byte of it; a redirect's body is never decoded.
        if let coding = head.unofferedCoding, !(300...399).contains(head.status) {
            overflow = .unofferedCoding(coding)
            return 0
        }
        return count
    }
}

extension CurlTransfer {
    /// `CURL_WRITEFUNC_PAUSE` (0x10000001): the macro is not imported into Swift.
    static let pauseWrite = 0x1000_0001
    /// The most curl hands one write callback (`CURL_MAX_WRITE_SIZE`), so a spilling body's
    /// buffer never grows past the threshold plus this.
    static let chunkAllowance = 16 << 10
}

/// Never crosses threads: it holds raw curl pointers only the loop thread may touch.
@available(*, unavailable)
extension CurlTransfer: Sendable {}
