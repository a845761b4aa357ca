// ParseConfig -- how Java reads a /zookeeper/config: ZooKeeper's
// QuorumMaj (QuorumPeer.QuorumServer for each server.N line), as Curator's
// EnsembleTracker and ZooKeeperAdmin users parse it, then Curator's
// EnsembleTracker.configToConnectionString, and zkCli's "config -c"
// (ConfigUtils.getClientConfigStr, which skips a line it cannot parse).
//
// Usage: java -cp CLASSPATH ParseConfig FILE...
//
// One line per file: "OK ID=HOST:QUORUMPORT:ELECTIONPORT:ROLE,... |
// CONNECTSTRING | CLIENTCONFIGSTR" (members by id), or "ERR EXCEPTION".

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.curator.framework.imps.EnsembleTracker;
import org.apache.zookeeper.server.quorum.QuorumPeer;
import org.apache.zookeeper.server.quorum.flexible.QuorumMaj;
import org.apache.zookeeper.server.util.ConfigUtils;

public class ParseConfig {
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            String text = new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8);
            String line;
            try {
                Properties props = new Properties();
                props.load(new StringReader(text));
                QuorumMaj qv = new QuorumMaj(props);
                List<String> members = new ArrayList<>();
                for (Map.Entry<Long, QuorumPeer.QuorumServer> e : new TreeMap<>(qv.getAllMembers()).entrySet()) {
                    QuorumPeer.QuorumServer qs = e.getValue();
                    members.add(e.getKey() + "=" + qs.addr.getOne().getHostString() + ":"
                        + qs.addr.getOne().getPort() + ":" + qs.electionAddr.getOne().getPort()
                        + ":" + qs.type.toString().toLowerCase());
                }
                line = "OK " + String.join(",", members) + " | " + EnsembleTracker.configToConnectionString(qv)
                    + " | " + ConfigUtils.getClientConfigStr(text);
            } catch (Exception e) {
                line = "ERR " + e.toString().replace('\n', ' ');
            }
            System.out.println(line);
        }
        System.out.flush();
    }
}
