import Foundation
import XCTest

/// A real nginx (Debian `nginx`) on 127.0.0.1 and a free port, for the HTTPS client tests of
/// both test targets: started with a temporary configuration in `directory`, HTTP/2 and
/// HTTP/1.1 over TLS (`listen ... ssl http2`, so ALPN offers h2), a client certificate
/// required from `clientCA` (`ssl_verify_client on`). Skips the test when nginx is missing.
/// `stop()` (also run by `deinit`) kills it.
///
/// Locations every instance serves: `/to-https` (302 to /ok), `/to-http` (302 to an http
/// URL), `/loop` (302 to itself), `/ok` (200 "ok " + the client certificate's subject DN),
/// `/missing` (404 with a page), `/broken` (500 with a page), and the files of `directory`
/// under `/files/`.
package final class NginxTestServer {
    package let port: Int
    private let process: ChildProcess
    private let directory: String

    /// - Parameters: `chain` the server certificate then its issuers (PEM file), `key` its
    ///   key, `clientCA` the CA client certificates must chain to, `directory` a scratch folder.
    package init(chain: String, key: String, clientCA: String, directory: String) throws {
        guard
            let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw XCTSkip("nginx is not installed (apt-get install nginx)")
        }
        self.directory = directory
        let port = try TLSTestServer.freePort()
        let dir = directory
        let config = """
            daemon off; master_process off; pid \(dir)/nginx.pid; error_log \(dir)/nginx-error.log;
            events { }
            http {
                access_log off;
                client_body_temp_path \(dir); proxy_temp_path \(dir); fastcgi_temp_path \(dir);
                uwsgi_temp_path \(dir); scgi_temp_path \(dir);
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(chain); ssl_certificate_key \(key);
                    ssl_client_certificate \(clientCA); ssl_verify_client on; ssl_verify_depth 3;
                    location = /to-https { return 302 /ok; }
                    location = /to-http { return 302 http://127.0.0.1:\(port)/ok; }
                    location = /loop { return 302 /loop; }
                    location = /ok { return 200 "ok $ssl_client_s_dn\\n"; }
                    location = /missing { return 404 "no such report\\n"; }
                    location = /broken { return 500 "the report service failed\\n"; }
                    location /files/ { alias \(dir)/; }
                }
            }
            """
        try config.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try ChildProcess(
            [binary, "-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/nginx-error.log"], directory: dir,
            stdout: .appending(dir + "/nginx.out"), stderr: .appending(dir + "/nginx.out"))
        self.port = port
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && process.isRunning {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: dir + "/nginx.out", encoding: .utf8)) ?? ""
        stop()
        throw XCTSkip("nginx did not start: \(log)")
    }

    /// `https://127.0.0.1:PORT` + `path`.
    package func url(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// Kill nginx and reap it.
    package func stop() {
        guard process.isRunning else { return }
        process.kill9()
        _ = try? process.wait(timeout: 2)
    }

    deinit { stop() }
}
