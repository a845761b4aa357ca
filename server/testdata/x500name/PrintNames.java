import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.security.auth.x500.X500Principal;

/**
 * Prints, for each file named on the command line, the RFC 2253 name Java
 * gives the subject: X509Certificate.getSubjectX500Principal().getName() for
 * a certificate (*.crt, DER or PEM), new X500Principal(bytes).getName() for
 * a DER-encoded Name (*.name). ZooKeeper's X509AuthenticationProvider uses
 * the former as a client's x509 id. One line per file: "OK " and the hex of
 * the name's UTF-8 bytes, or "ERR " and the exception.
 */
public class PrintNames {
    public static void main(String[] args) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        StringBuilder out = new StringBuilder();
        for (String arg : args) {
            try {
                String name;
                if (arg.endsWith(".crt")) {
                    try (InputStream in = new FileInputStream(arg)) {
                        X509Certificate cert = (X509Certificate) cf.generateCertificate(in);
                        name = cert.getSubjectX500Principal().getName();
                    }
                } else {
                    name = new X500Principal(Files.readAllBytes(Paths.get(arg))).getName();
                }
                out.append("OK ");
                for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
                    out.append(String.format("%02x", b & 0xff));
                }
            } catch (Exception e) {
                out.append("ERR ").append(e.toString().replace('\n', ' '));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
