// The TLS client for Swift concurrency: an actor whose executor is a serial
// Dispatch queue of its own, so that the blocking socket and GnuTLS calls of
// RSATLSConnection run on that queue's thread, one at a time, and never on the cooperative
// pool. Why an actor with its own executor rather than a Sendable class that hops to a
// queue: the actor's isolation is the proof that the non-thread-safe GnuTLS session is used
// by one call at a time, checked by the compiler; the custom executor makes "isolated" mean
// "on the connection's thread", so the calls may block without stalling other tasks.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
// This target also depends on CCurl, whose header includes <sys/socket.h>: clang may file the
// socket declarations under CCurl's module instead of Glibc's, depending on which it built
// first, so a file that uses them imports both (a clean release build lost SOCK_STREAM here).
internal import CCurl

/// A serial executor over one Dispatch serial queue (a thread Dispatch provides even when
/// every processor is busy).
internal final class RSATLSQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label, qos: .userInitiated) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// The socket of an async connection as cancellation handlers see it: shut down on
/// cancellation, unless already closed (so that a reused descriptor number is never touched).
internal final class RSATLSCancellableSocket: Sendable {
    private struct State { var fileDescriptor: Int32?; var cancelled = false; var closed = false }
    private let state = PThreadMutex(State())

    /// Record the socket (before its connect, and again once connected). - Returns: false
    /// when cancellation came first (the caller then closes it).
    func attach(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.fileDescriptor = fd
            state.closed = false
            return true
        }
    }

    /// From a cancellation handler: shut the socket down both ways, which wakes a blocked
    /// poll, recv or send at once.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let fd = state.fileDescriptor, !state.closed { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Mark the socket closed (before it is closed) so that later cancellations leave it alone.
    func markClosed() { state.withLock { $0.closed = true } }
}

/// A TLS client connection for async code: ``RSATLSConnection``'s handshake, trust
/// evaluation, client authentication by rsakit's engine and record I/O, as an actor.
///
/// Every call runs on the connection's own serial executor (a Dispatch queue and its
/// thread), not on the cooperative pool: a read that waits for the server stalls no other
/// task. Calls on one connection run one at a time, in the order they reach the actor.
/// Sendable: share it between tasks freely.
///
/// Cancellation: a task cancelled while it waits in ``connect(host:port:configuration:identity:)``,
/// ``read(maximumByteCount:timeout:)`` or ``write(_:)-(_:[UInt8])`` throws `CancellationError`
/// and the connection ends (its socket is shut down), as cancelling a URLSession task ends
/// its request: later reads and writes throw `RSATLSError.connectionFailed`. Cancelling a
/// connect ends the TCP connect too, at once.
public actor RSAAsyncTLSConnection {
    private let executor: RSATLSQueueExecutor
    private let socket: RSATLSCancellableSocket
    private let connection: RSATLSConnection

    /// The connection's own serial executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The settings it was made with.
    public nonisolated let configuration: RSATLSClientConfiguration
    /// The identity offered to the server, if any (given, or chosen by a client identity handler).
    public nonisolated let identity: RSATLSClientIdentity?
    /// The negotiated protocol ("TLS1.3", "TLS1.2").
    public nonisolated let protocolVersion: String
    /// The negotiated cipher suite's IANA name ("TLS_AES_256_GCM_SHA384").
    public nonisolated let cipherSuite: String
    /// GnuTLS's description of the session ("(TLS1.3)-(ECDHE-X25519)-(RSA-PSS-RSAE-SHA256)-(AES-256-GCM)").
    public nonisolated let sessionDescription: String
    /// The scheme of the client's CertificateVerify as GnuTLS names it ("RSA-PSS-RSAE-SHA256"), if one was sent.
    public nonisolated let clientSignatureAlgorithm: String?
    /// The server's certificates as sent, leaf first.
    public nonisolated let serverCertificates: [X509Certificate]
    /// The evaluation of the server's chain (see ``RSATLSConnection/trustEvaluation``).
    public nonisolated let trustEvaluation: RSATrustEvaluation
    /// What the trust handler decided.
    public nonisolated let serverTrustDecision: RSATLSServerTrustDecision
    /// Whether the server asked for a client certificate.
    public nonisolated let clientCertificateRequested: Bool
    /// Whether the client sent its certificate.
    public nonisolated let clientCertificateSent: Bool
    /// Every private-key operation rsakit's engine made in the handshake, in order.
    public nonisolated let privateKeyOperations: [RSATLSPrivateKeyOperation]
    /// The protocol the server selected by ALPN (see ``RSATLSConnection/negotiatedApplicationProtocol``).
    public nonisolated let negotiatedApplicationProtocol: String?

    private init(
        executor: RSATLSQueueExecutor, socket: RSATLSCancellableSocket, connection: RSAHandOver<RSATLSConnection>
    ) {
        self.executor = executor
        self.socket = socket
        let connection = connection.value
        self.connection = connection
        configuration = connection.configuration
        identity = connection.identity
        protocolVersion = connection.protocolVersion
        cipherSuite = connection.cipherSuite
        sessionDescription = connection.sessionDescription
        clientSignatureAlgorithm = connection.clientSignatureAlgorithm
        serverCertificates = connection.serverCertificates
        trustEvaluation = connection.trustEvaluation
        serverTrustDecision = connection.serverTrustDecision
        clientCertificateRequested = connection.clientCertificateRequested
        clientCertificateSent = connection.clientCertificateSent
        privateKeyOperations = connection.privateKeyOperations
        negotiatedApplicationProtocol = connection.negotiatedApplicationProtocol
    }

    /// Connect to `host`:`port` over TCP and complete the handshake on the new connection's
    /// executor, as ``RSATLSConnection/connect(host:port:configuration:identity:)`` does;
    /// ``RSATLSClientConfiguration/serverTrustHandler`` runs there too.
    ///
    /// - Throws: `CancellationError` when the task is cancelled (the socket is closed);
    ///   every error of the synchronous form (`RSATLSError.serverNotTrusted` with the typed
    ///   evaluation, `RSATLSError.connectFailed`, `RSATLSError.timedOut`, `RSATLSError.handshakeFailed`, ...).
    public static func connect(
        host: String, port: Int, configuration: RSATLSClientConfiguration,
        identity: RSATLSClientIdentity?
    ) async throws -> RSAAsyncTLSConnection {
        try Task.checkCancellation()
        let executor = RSATLSQueueExecutor(
            label: "org.rsakit.tls.\(RSATLSConnection.endpointText(host: host, port: port))")
        let socket = RSATLSCancellableSocket()
        let connection: RSAHandOver<RSATLSConnection> = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                executor.queue.async {
                    continuation.resume(
                        with: Result {
                            let fd = try RSATLSSocket.connect(
                                host: host, port: port, timeout: configuration.timeout, cancellation: socket)
                            guard socket.attach(fd) else {
                                Glibc.close(fd)
                                throw CancellationError()
                            }
                            do {
                                return RSAHandOver(
                                    try RSATLSConnection(
                                        fileDescriptor: fd, configuration: configuration,
                                        identity: identity, ownsFileDescriptor: true))
                            } catch {
                                socket.markClosed()
                                Glibc.close(fd)
                                throw socket.isCancelled ? CancellationError() : error
                            }
                        })
                }
            }
        } onCancel: {
            socket.cancel()
        }
        return RSAAsyncTLSConnection(executor: executor, socket: socket, connection: connection)
    }

    /// Run a blocking call of the connection on its serial queue, with cancellation shutting
    /// the socket down. The awaiting task holds no thread meanwhile. The call is enqueued on
    /// the queue the actor's own jobs run on, so calls run one at a time in the order they
    /// reached the actor: a call that arrives while another blocks waits behind it. (Run inside
    /// `withTaskCancellationHandler`'s closure, the body would run off the actor, on the
    /// cooperative pool, and overlap with the next call.) The call whose task was cancelled
    /// throws `CancellationError`; later calls, from any task, find the connection over.
    private func cancellable<T: Sendable>(_ body: @escaping @Sendable (RSATLSConnection) throws -> T) async throws -> T
    {
        try Task.checkCancellation()
        let ended = RSATLSError.connectionFailed(reason: "the connection was ended by a cancelled call")
        guard !socket.isCancelled else { throw ended }
        let connection = RSAHandOver(self.connection)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                    executor.queue.async { [socket] in
                        continuation.resume(
                            with: Result {
                                guard !socket.isCancelled else { throw ended }
                                return try body(connection.value)
                            })
                    }
                }
            } onCancel: { [socket] in
                socket.cancel()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Send `bytes` as application data.
    /// - Throws: `CancellationError`; `RSATLSError.connectionFailed` (closed or failed).
    public func write(_ bytes: [UInt8]) async throws {
        try await cancellable { try $0.write(bytes) }
    }

    /// Send `data` as application data (``write(_:)-(_:[UInt8])``).
    /// - Throws: as the `[UInt8]` form.
    public func write(_ data: Data) async throws {
        try await write([UInt8](data))
    }

    /// Receive application data: at most `maximumByteCount` bytes, as soon as some arrive
    /// (``RSATLSConnection/read(maximumByteCount:timeout:)``).
    /// - Parameter timeout: seconds to wait (nil: no limit other than cancellation).
    /// - Returns: the bytes, or nil once the server closed the connection (close_notify).
    /// - Throws: `CancellationError`; `RSATLSError.clientCertificateRejected`,
    ///   `RSATLSError.connectionFailed`, `RSATLSError.timedOut`.
    public func read(maximumByteCount: Int = 16_384, timeout: Double? = nil) async throws -> [UInt8]? {
        try await cancellable { try $0.read(maximumByteCount: maximumByteCount, timeout: timeout) }
    }

    /// Send close_notify and close the socket (``RSATLSConnection/close()``). Later reads
    /// return nil and writes fail; calling it again does nothing.
    public func close() {
        socket.markClosed()
        connection.close()
    }
}
