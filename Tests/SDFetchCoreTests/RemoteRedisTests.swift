import Foundation
import SDFetchTestSupport
import Testing

@testable import SDFetchCore

/// The remote cache tier against a real `redis-server` on loopback: the same keys as over
/// HTTP, TTLs, a database and a password from the URL, and a server that refuses writes
/// or sends bytes that are not their record's.
@Suite(
    "Remote cache on Redis", .cleansUp, .timeLimit(.minutes(1)),
    .enabled(if: LocalRedis.isAvailable, "redis-server or redis-cli is not installed"))
struct RemoteRedisTests {
    let directory = TemporaryDirectory("remote-redis")

    private func redis(_ settings: [String] = []) async throws -> LocalRedis {
        try await LocalRedis.start(directory: directory.appending("redis"), settings: settings)
    }

    @Test("a second runner is served from Redis, and the origin sees each URL once")
    func secondRunnerHits() async throws {
        let (origin, urls) = try await RemoteRunner.origin(5)
        let redis = try await redis()
        let first = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "a")
        #expect(first.count(.downloaded) == 5 && first.counts.uploads == 5)
        #expect(try redis.keys("cas/").count == 5 && redis.keys("ac/").count == 5)
        let second = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "b")
        #expect(second.count(.cached) == 5 && second.counts.hits == 5 && second.counts.errors == 0)
        #expect(second.results.allSatisfy { $0.remote == redis.url() })
        #expect(origin.totalRequests == 5)
        for (index, result) in second.results.enumerated() {
            #expect(
                FileManager.default.contents(atPath: try #require(result.path)) == Data(SampleImages.png(seed: index)))
        }
    }

    @Test("?ttl= sets the keys' expiry")
    func ttlApplies() async throws {
        let (_, urls) = try await RemoteRunner.origin(1)
        let redis = try await redis()
        _ = try await RemoteRunner.run(urls, remotes: [redis.url("?ttl=1h")], in: directory, name: "a")
        let keys = try redis.keys("")
        try #require(keys.count == 2, "one object and one record: \(keys)")
        for key in keys {
            let ttl = try #require(Int(try redis.command("TTL", key)))
            #expect(ttl > 3000 && ttl <= 3600)
        }
    }

    @Test("the password and database in the URL are used, and the password is never named")
    func passwordAndDatabase() async throws {
        let (_, urls) = try await RemoteRunner.origin(2)
        let redis = try await redis(["--requirepass", "s3cret"])
        let remote = redis.url("/3").replacingOccurrences(of: "redis://", with: "redis://:s3cret@")
        let first = try await RemoteRunner.run(urls, remotes: [remote], in: directory, name: "a")
        #expect(first.counts.uploads == 2 && first.counts.errors == 0)
        #expect(try redis.command("-a", "s3cret", "-n", "3", "DBSIZE") == "4")
        let second = try await RemoteRunner.run(urls, remotes: [remote], in: directory, name: "b")
        #expect(second.counts.hits == 2)
        #expect(second.results.allSatisfy { $0.remote?.contains("s3cret") == false })

        let wrong = remote.replacingOccurrences(of: "s3cret", with: "wrong")
        let refused = try await RemoteRunner.run(urls, remotes: [wrong], in: directory, name: "c")
        #expect(refused.count(.downloaded) == 2 && refused.counts.hits == 0)
        #expect(refused.warnings.count == 1 && refused.warnings.allSatisfy { !$0.remote.contains("wrong") })
    }

    @Test("a server out of memory refuses the uploads: counted as errors, switched off, no URL failed")
    func refusedWrites() async throws {
        let (_, urls) = try await RemoteRunner.origin(6)
        let redis = try await redis(["--maxmemory", "1", "--maxmemory-policy", "noeviction"])
        let run = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "a")
        #expect(run.count(.downloaded) == 6 && run.counts.uploads == 0)
        #expect(run.counts.errors == RemoteTier.errorLimit && run.warnings.count == 1)
        #expect(run.warnings.first?.detail.contains("OOM") == true)
    }

    @Test("a value that is not its record's bytes is a remote error and the origin answers")
    func corruptValue() async throws {
        let (origin, urls) = try await RemoteRunner.origin(1)
        let redis = try await redis()
        _ = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "a")
        let object = try #require(try redis.keys("cas/").first)
        _ = try redis.command("SETRANGE", object, "40", "X")
        let run = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "b")
        #expect(run.count(.downloaded) == 1 && run.counts.errors == 1 && run.counts.hits == 0)
        #expect(origin.totalRequests == 2)
    }

    @Test("read-only mode writes no key")
    func readOnly() async throws {
        let (_, urls) = try await RemoteRunner.origin(2)
        let redis = try await redis()
        let run = try await RemoteRunner.run(urls, remotes: [redis.url()], in: directory, name: "a") {
            $0.remoteCache.mode = .readOnly
        }
        #expect(run.count(.downloaded) == 2 && run.counts.misses == 2)
        #expect(try redis.keys("").isEmpty)
    }
}

/// `redis://` URLs as the remote tier reads them.
@Suite("Redis remote addresses")
struct RemoteRedisAddressTests {
    @Test("host, port, user, password, database and ttl are read")
    func fullAddress() throws {
        let address = try #require(RemoteRedisAddress(parsing: "redis://fleet:p%40ss@cache.local:6380/2?ttl=14d"))
        #expect(address.host == "cache.local" && address.port == 6380)
        #expect(address.user == "fleet" && address.password == "p@ss")
        #expect(address.database == 2 && address.ttlSeconds == 14 * 86400)
        #expect(address.setupCommands.count == 2)
    }

    @Test("defaults: port 6379, database 0, no ttl, nothing sent first")
    func defaults() throws {
        let address = try #require(RemoteRedisAddress(parsing: "redis://127.0.0.1"))
        #expect(address.port == 6379 && address.database == 0 && address.ttlSeconds == nil)
        #expect(address.setupCommands.isEmpty)
    }

    @Test("a ttl that overflows or exceeds what Redis takes is refused, the longest one read")
    func hugeTTL() throws {
        for url in ["redis://h?ttl=999999999999999d", "redis://h?ttl=9223372036854775807s", "redis://h?ttl=36501d"] {
            #expect(RemoteRedisAddress(parsing: url) == nil, "\(url)")
        }
        let longest = try #require(RemoteRedisAddress(parsing: "redis://h?ttl=36500d"))
        #expect(longest.ttlSeconds == RemoteRedisAddress.maxTTLSeconds)
    }

    @Test("no host, a database that is no number, a bad ttl or another scheme are refused")
    func refused() {
        for url in ["redis://", "redis://h/x", "redis://h?ttl=soon", "redis://h?ttl=0", "http://h", "rediss://h"] {
            #expect(RemoteRedisAddress(parsing: url) == nil, "\(url)")
        }
    }
}
