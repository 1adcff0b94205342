import SDFetchCore

/// `sdfetch.1`, rendered from the same option tables as `--help` and the completions.
enum ManPage {
    static func render() -> String {
        var page = """
            .TH SDFETCH 1 "" "sdfetch \(SDFetchVersion.string)" "User Commands"
            .SH NAME
            sdfetch \\- fetch, verify and cache images listed by URL
            .SH SYNOPSIS

            """
        for command in CommandLineParser.commands {
            page += ".B sdfetch\n\(roff(command.usage))\n.br\n"
        }
        page += ".B sdfetch\nhelp [COMMAND] | \\-\\-help | \\-\\-version\n"
        page += ".SH DESCRIPTION\n\(roff(FetchCommand.abstract))\n"
        page += ".SH COMMANDS\n"
        for command in CommandLineParser.commands {
            page += ".TP\n.B \(command.name)\n\(roff(command.summary))\n"
        }
        page += ".SH FETCH OPTIONS\n" + options(FetchCommand.allOptions)
        for command in CommandLineParser.commands where command.name != FetchCommand.name {
            page += ".SH \(command.name.uppercased()) OPTIONS\n" + roff(command.abstract) + "\n" + optionRows(command)
        }
        page += """
            .SH URLS
            An argument that is an absolute \\fBhttp://\\fR or \\fBhttps://\\fR URL is a URL to fetch, as
            in curl, wget2 and aria2c, even when a path spelt so exists in the working folder; a file
            named like a URL is read when written \\fI./https:...\\fR. URL arguments form one list, read where the first stood,
            whose lines are reported as \\fIarguments:N\\fR. With exactly one URL argument, \\fB\\-o\\fR
            names the output file, as curl's \\fB\\-o\\fR does (\\fBsdfetch https://host/cat.png \\-o cat.png\\fR),
            unless it ends in \\fB/\\fR, is an existing directory or starts with a dot; otherwise it is a folder.
            \\fB\\-o \\-\\fR writes that one image to standard output, as curl's does
            (\\fBsdfetch https://host/cat.png \\-o \\- | convert \\- ...\\fR), and the result line to
            standard error. A name ending in an image extension (\\fItwo.png\\fR) with a list or several
            URLs is a usage error, not a folder; \\fB\\-o x.png\\fR for a JPEG writes its bytes as fetched
            and warns.
            .PP
            A URL is sent as a browser sends it (the WHATWG URL standard): a space inside it, and the
            other characters of the standard's percent\\-encode sets for the user name and password, the
            path and the query, are written \\fB%XX\\fR with upper\\-case hex (\\fB%20\\fR for a space, each byte
            of a non\\-ASCII character its own \\fB%XX\\fR); a backslash in the path is \\fB/\\fR. Spellings
            that encode alike are one cache key. A tab, CR, LF, NUL or other control character inside a
            URL makes the line \\fBinvalid\\fR; blanks at a line's ends are trimmed. The cache key leaves out
            the password of the URL's own user info, and nothing else.
            .SH PROGRESS
            On a terminal, one line is redrawn below the results. At 80 columns it reads
            \\fB[=====>    ] 41%  412/1000  9 failed  3.2/~7.9 MiB  1.1 MiB/s  ETA 0:04\\fR:
            the fill and the percentage weigh the run by bytes where sizes are known (Content\\-Length,
            and the mean image of the run for URLs not yet answered, queued ones included; \\fB~\\fR marks
            such an estimate) and by URLs where not; then URLs done of all, failures (invalid lines and
            skipped URLs are counted apart), bytes received of the run's total, the rate and the time
            left. A wider line adds hosts down, the transfers in flight (under way on a connection) and
            the URLs queued for a lane, and the downloaded, cached, skipped and invalid counts. When the
            line is too narrow those go first, from the end, before the graphic shrinks below 30
            columns; it keeps 10, is never pushed out by them, and never widens again while the
            terminal keeps its width. The fill never goes back. The time left blends what the byte rate
            and the URL rate say, as the fill does, and follows their changes over a few seconds rather
            than jumping; when only transfers waiting for an answer are left and none has finished for
            a second, it is at least the time to the last one's timeout.
            .SH PUBLISHER OPT\\-OUTS
            An image whose response carries \\fIX\\-Robots\\-Tag\\fR \\fBnoai\\fR or \\fBnoimageai\\fR (bare, or
            for \\fBsdfetch\\fR or \\fB*\\fR) is not stored: it fails as \\fBopted\\-out\\fR, is recorded like a
            404, and is \\fBskipped\\fR by later runs for \\fB\\-\\-max\\-age\\fR. This is on by default;
            \\fB\\-\\-ignore\\-opt\\-outs\\fR stores such images (with \\fB\\-\\-retry\\-failed\\fR once recorded).
            .SH TABLES
            A FILE named \\fI*.csv\\fR, \\fI*.tsv\\fR, \\fI*.jsonl\\fR or \\fI*.ndjson\\fR (each also \\fI.gz\\fR) is read
            as a table, as is any input with \\fB\\-\\-input\\-format\\fR; a \\fI*.gz\\fR list of any format is
            inflated. CSV (RFC 4180 quoting) and TSV (no quoting: a field is everything between tabs)
            begin with a header row; JSON Lines hold one object per line. The URL is in the column
            (JSON Lines: the key) named by \\fB\\-\\-url\\-column\\fR, \\fBurl\\fR by default; every other
            column goes into the row's \\fB\\-\\-json\\fR object as \\fBfields\\fR, with \\fBsource\\fR
            (FILE:LINE). Rows whose URLs repeat share one fetch; each gets its own JSON object, while
            text output keeps one line per unique URL. A row with another number of fields than the
            header, an unclosed quote, broken JSON, more than 64 KiB or more than 4096 fields is
            \\fBinvalid\\fR at its FILE:LINE; a header without the URL column or with more than 4096
            columns makes the file unreadable (exit 3).
            .PP
            A column named \\fBsha256\\fR (\\fB\\-\\-sha256\\-column\\fR) pins a row's bytes to 64 hex digits.
            Bytes with another SHA-256 fail as \\fBhash\\-mismatch\\fR, neither stored nor recorded; a
            cache entry with other bytes is not served but fetched again and judged; under
            \\fB\\-\\-offline\\fR it fails as \\fBhash\\-mismatch\\fR. A later row pinning the same URL to
            another hash is \\fBinvalid\\fR.
            .SH RESIZED COPIES
            With \\fB\\-o\\fR, \\fB\\-\\-resize\\fR \\fISIZE\\fR makes each output file a resized copy of the cached
            original: a later run with another size, mode or format makes its copies from the cache,
            without a request. \\fB\\-\\-resize\\-mode\\fR: \\fBlonger\\fR (the longer side is SIZE; default),
            \\fBshorter\\fR (the shorter side), \\fBcrop\\fR (SIZE x SIZE from the centre), \\fBpad\\fR (SIZE x SIZE,
            margins of \\fB\\-\\-resize\\-background\\fR), \\fBnone\\fR (the original size, re\\-encoded). Smaller images
            are enlarged. JPEG, PNG, GIF (first frame), WebP (first frame) and AVIF are read; EXIF
            orientation (AVIF's \\fBirot\\fR and \\fBimir\\fR) is applied; alpha is kept in PNG and WebP copies
            and laid on the background in JPEG ones. A JPEG is decoded at the smallest DCT scale leaving
            twice SIZE; the resampler is Lanczos\\-3. An image that cannot be resized fails its URL as
            \\fBcorrupt\\-image\\fR; a copy over \\fB\\-\\-max\\-pixels\\fR as \\fBtoo\\-many\\-pixels\\fR. With \\fB\\-o\\fR \\fIFILE\\fR,
            the copy's format is the one FILE's extension names (\\fI.jpg\\fR, \\fI.png\\fR, \\fI.webp\\fR); another
            image extension (\\fI.gif\\fR), or one that disagrees with \\fB\\-\\-resize\\-format\\fR, is a usage
            error. Without \\fB\\-o\\fR, \\fB\\-\\-resize\\fR resizes nothing and says so.
            .PP
            A copy is never made twice: each carries a mark inside its file (a JPEG comment, a PNG
            \\fBtEXt\\fR chunk, a WebP \\fBSDFR\\fR chunk) naming its options and the SHA\\-256 of its original,
            sealed by a SHA\\-256 of the rest of the file. A run with the same options over the same
            original finds the copy made and decodes nothing; other options, another original or a
            changed file make it again. The mark survives a plain \\fBcp\\fR or \\fBtar\\fR, so a copied
            folder, or a killed run run again, redoes nothing. \\fB\\-v\\fR says which copies were made.
            .PP
            \\fBsdfetch \\-o thumbs \\-\\-resize 256 \\-\\-resize\\-mode crop \\-\\-resize\\-format webp urls.txt\\fR
            .SH SIGNED URLS
            \\fB\\-\\-key\\-ignore\\-query\\fR \\fIPATTERN\\fR (repeatable) leaves query parameters whose names match the
            glob (ignoring case) out of the cache and de\\-duplication key; they are still sent. Two URLs
            that differ only in them are one image, cached once. Presigned S3: \\fBX\\-Amz\\-*\\fR; GCS:
            \\fBX\\-Goog\\-*\\fR; CloudFront: \\fBExpires\\fR, \\fBSignature\\fR, \\fBKey\\-Pair\\-Id\\fR, \\fBPolicy\\fR.
            \\fB\\-\\-json\\fR's \\fBkey\\fR is the key used. No failure of a request that carried such
            parameters is recorded, whatever its status (an expired signature may answer 400), and a failure
            recorded for the URL without them never skips a request with them.
            .PP
            \\fBsdfetch \\-\\-key\\-ignore\\-query 'X\\-Amz\\-*' presigned.txt\\fR
            .SH MANY HOSTS
            Requests are spread over hosts the way a browser does it: at most \\fB\\-\\-per\\-host\\fR (6)
            connections to one host, \\fB\\-j\\fR (256) transfers in all. A host no connection has reached
            yet gets one transfer until its first connection is made. A host that answers over HTTP/2
            gets one connection carrying up to 100 transfers. A \\fB429\\fR or \\fB503\\fR with
            \\fIRetry\\-After\\fR pauses that host's other requests for as long (at most 30 s); other
            hosts go on. A host that has not answered yet in the run (no transfer to it came to an
            end) is given up at its first timeout, before or after connecting (it swallows connections,
            accepts and says nothing, or trickles), or when the resolver, asked once more, says its name
            does not exist (a resolver that did not answer is retried); one that answered before keeps
            its retries and is given up after \\fB\\-\\-host\\-failures\\fR failed connections in a row.
            The URLs that met the failure keep their own kind (\\fBtimeout\\fR, \\fBdns\\fR, \\fBconnect\\fR);
            the host's other URLs fail at once as \\fBhost\\-down\\fR, with the host's cause in
            \\fB\\-\\-json\\fR's \\fBhost_cause\\fR and \\fB\\-\\-summary\\fR's \\fBhost_causes\\fR, told in one
            line per host. A host is an origin here: scheme, name and port (a dead port 80 never takes
            the same name's HTTPS down). A host found down on evidence about the host itself (its name
            does not resolve, no connection within the timeout, two of its URLs met silence after
            connecting, or it refused two connections, or reset those of two different URLs, and
            answered nothing) is remembered
            in the cache directory (\\fIhosts/\\fR) for
            \\fB\\-\\-host\\-down\\-for\\fR (1h): a run within that time reports its URLs \\fBhost\\-down\\fR
            at once without dialling it, and \\fB\\-\\-retry\\-failed\\fR tries it again. One slow URL is
            that URL's \\fBtimeout\\fR, asked again by the next run. A run reads up to 2048 lines ahead of its
            transfers; a new host met there is probed at once (its name looked up and a TCP connection
            opened, nothing sent, outside \\fB\\-j\\fR), so a dead host listed late is given up while the
            rest of the list runs, not after it. While every transfer slot is taken, a list read from
            files (not standard input or a pipe) is also read on to its end for host names alone, and
            their hosts are probed after the nearer ones.
            .PP
            Every transfer ends in bounded time. Besides \\fB\\-\\-timeout\\fR (no byte for 15 s), a
            transfer that receives fewer than \\fB\\-\\-speed\\-limit\\fR bytes a second (100), counted over
            each window of \\fB\\-\\-speed\\-time\\fR seconds (30) from its start, fails as \\fBtimeout\\fR:
            a server that sends its head or its body a byte at a time costs at most a window per try,
            and a host that never answered is then given up. The floor is low on purpose:
            \\fB\\-j\\fR transfers share one line, and 256 of them on a 2 Mbit/s line still get about
            1 KB/s each; \\fB\\-\\-limit\\-rate\\fR's own pauses never count against it; \\fB\\-\\-speed\\-limit 0\\fR
            turns it off.
            Hosts whose answers take a second or more are named at the end. TLS certificates are
            checked against one CA bundle, libcurl's default (\\fI/etc/ssl/certs/ca\\-certificates.crt\\fR)
            or \\fB\\-\\-cacert\\fR's, read once per run however many hosts the list names.
            .SH CONFIGURATION
            Options may be set in \\fI$XDG_CONFIG_HOME/sdfetch/config\\fR (else \\fI~/.config/sdfetch/config\\fR),
            or in the file named by \\fB\\-\\-config\\fR; \\fB\\-\\-no\\-config\\fR reads none. Each line is
            \\fIoption\\fR = \\fIvalue\\fR with a long option name; switches take true or false. A \\fB#\\fR
            at the start of a line or after a space or tab starts a comment, on every line
            (\\fBkey\\-ignore\\-query = X\\-Amz\\-*   # S3\\fR); a value with a space before a \\fB#\\fR
            goes in double quotes, the whole value (a \\fB"\\fR inside a value is text).
            Options given on the command line win. One file serves every command, so \\fBfetch\\fR and
            \\fBclean\\fR share one \\fBmax\\-age\\fR. A config file owned by another user (other than root),
            writable by every user, or not a regular file is refused: it could turn off certificate checks.
            .SH SECURITY
            A password in a URL or a proxy URL is printed, reported and stored as \\fIuser:***@host\\fR,
            and the cache key leaves it out. On a redirect to another host, port or scheme, every
            \\fB\\-H\\fR header (Authorization and Cookie included) and the conditional headers are dropped unless
            \\fB\\-\\-location\\-trusted\\fR; Proxy-Authorization goes to the proxy only. A cache directory
            others can write (owned by another user; writable by every user, sticky or not, or by a group
            other than the user's private one; or inside a folder others can write) is named in a warning:
            whoever can write it feeds images to every run. \\fBmerge\\fR verifies what it imports;
            \\fBclean\\fR removes only what it recognises as a cache. Only gzip, deflate and brotli bodies
            are accepted (zstd may declare a 128 MiB window); a response in another coding fails as
            \\fBnot\\-an\\-image\\fR. Terminal output escapes control, bidi and zero-width characters. Lock files under \\fIlocks/\\fR are created mode 0600: a user who
            can only read the cache cannot hold its locks. No fetch waits for \\fBclean\\fR, \\fBverify\\fR or
            \\fBmerge\\fR: the end-of-run trim is left for the next run (said under \\fB\\-v\\fR) when one of
            them holds the cache, and a bucket lock held longer than 2 s (a stopped process) is not
            waited for.
            .SH ENVIRONMENT
            .TP
            .B SDFETCH_CACHE_DIR
            cache directory; else \\fI$XDG_CACHE_HOME/sdfetch\\fR; else \\fI~/.cache/sdfetch\\fR
            .TP
            .B SDFETCH_SHARD
            K/N for \\fB\\-\\-shard auto\\fR; also read: CI_NODE_INDEX/CI_NODE_TOTAL (GitLab, 1-based),
            CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL, BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT,
            SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT
            .TP
            .B SDFETCH_REMOTE_CACHE_TOKEN
            bearer token sent to \\fB\\-\\-remote\\-cache\\fR servers (\\fIAuthorization: Bearer\\fR); Basic
            credentials come from the URL or \\fI~/.netrc\\fR
            .TP
            .B NO_COLOR, TERM=dumb
            no colour; TERM=dumb also means no redrawn progress bar
            .TP
            .B http_proxy, https_proxy, no_proxy
            as in curl, unless \\fB\\-\\-proxy\\fR is given
            .SH EXIT STATUS
            0 every URL downloaded, cached or revalidated; 1 some URL ended with a status that
            \\fB\\-\\-fail\\-on\\fR names (\\fBfailed,skipped,invalid\\fR by default: CI that tolerates known\\-dead
            URLs gives \\fB\\-\\-fail\\-on failed,invalid\\fR); 2 usage error; 3 unusable cache directory,
            unreadable input file, or results that cannot be
            written (standard output, \\fB\\-\\-summary\\fR, \\fB\\-o\\fR); 130 interrupted.
            .SH SEE ALSO
            .BR curl (1),
            .BR parallel (1)

            """
        return page
    }

    private static func optionRows<C: ParsableCommand>(_ command: C.Type) -> String {
        options(C.allOptions)
    }

    private static func options<T>(_ rows: [OptionSpec<T>]) -> String {
        rows.map { row in
            var head = row.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            head += "\\fB\\-\\-\(roff(row.long))\\fR"
            if case .value(let name) = row.arity { head += " \\fI\(roff(name))\\fR" }
            return ".TP\n\(head)\n\(roff(row.help))\n"
        }.joined()
    }

    /// Text safe in a roff line: backslashes and dashes escaped, no line starting with a control character.
    static func roff(_ text: String) -> String {
        var escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
