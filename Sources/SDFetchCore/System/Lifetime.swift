/// Runs `body` with `resource` and then `end`, however `body` ends (returns, throws, or its
/// task is cancelled): the scope is the resource's lifetime. The one shape behind
/// ``withFetcher(options:cache:now:notes:isolation:_:)`` and
/// ``withCurlEngine(maxTransfers:pacing:isolation:_:)``, the blocking pools' and the CLI's console.
package func withLifetime<Resource: Sendable, T, E: Error>(
    of resource: Resource, end: (Resource) async -> Void,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (Resource) async throws(E) -> T
) async throws(E) -> T {
    let result: Result<T, E>
    do throws(E) {
        result = .success(try await body(resource))
    } catch {
        result = .failure(error)
    }
    await end(resource)
    return try result.get()
}
