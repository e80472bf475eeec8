import Hummingbird
import NIOCore

/// The per-request context of the routes: Hummingbird's core storage plus the connection, so a
/// body that stalls can have its reading side closed and still get its 408 answer.
struct ServeRequestContext: RequestContext {
    /// Hummingbird's own per-request storage.
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}
