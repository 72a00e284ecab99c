// Times OHDSI SqlRender's render + translate (to DuckDB) of every record of a corpus, in one JVM.
//
//   java -cp SqlRender.jar bench/SqlRenderTiming.java PATTERNS.csv RECORDS.tsv OUT.tsv PASSES
//
// RECORDS.tsv: one record a line, tab-separated base64 of the SQL, then of each parameter's
// name and value (as sqlgold passes them to its own render).  OUT.tsv: one line per record and
// pass: pass, record index, nanoseconds, and the exception's class if SqlRender threw one.
// Written for sqlgold's bench (bench/bench_render.py); it calls SqlRender's public API only.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.List;

import org.ohdsi.sql.SqlRender;
import org.ohdsi.sql.SqlTranslate;

public class SqlRenderTiming {
	public static void main(String[] args) throws Exception {
		SqlTranslate.setReplacementPatterns(args[0]);
		List<String> lines = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
		int passes = Integer.parseInt(args[3]);
		Base64.Decoder b64 = Base64.getDecoder();
		int n = lines.size();
		String[] sqls = new String[n];
		String[][] names = new String[n][];
		String[][] values = new String[n][];
		for (int i = 0; i < n; i++) {
			String[] f = lines.get(i).split("\t", -1);
			sqls[i] = new String(b64.decode(f[0]), StandardCharsets.UTF_8);
			int k = (f.length - 1) / 2;
			names[i] = new String[k];
			values[i] = new String[k];
			for (int j = 0; j < k; j++) {
				names[i][j] = new String(b64.decode(f[1 + 2 * j]), StandardCharsets.UTF_8);
				values[i][j] = new String(b64.decode(f[2 + 2 * j]), StandardCharsets.UTF_8);
			}
		}
		StringBuilder out = new StringBuilder();
		for (int p = 0; p < passes; p++) {
			for (int i = 0; i < n; i++) {
				long start = System.nanoTime();
				String error = "";
				try {
					String rendered = SqlRender.renderSql(sqls[i], names[i], values[i]);
					SqlTranslate.translateSql(rendered, "duckdb");
				} catch (RuntimeException e) {
					error = e.getClass().getSimpleName();
				}
				long took = System.nanoTime() - start;
				out.append(p).append('\t').append(i).append('\t').append(took).append('\t').append(error).append('\n');
			}
		}
		Files.write(Paths.get(args[2]), out.toString().getBytes(StandardCharsets.UTF_8));
	}
}
