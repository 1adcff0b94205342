/// The product version, shown by `--version` and in the default User-Agent.
public enum SDFetchVersion {
    public static let string = "0.1.0"
}
