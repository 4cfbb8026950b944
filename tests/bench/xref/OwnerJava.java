// OwnerJava.java - the reference for qualified xref on Java (owner_cmp.py
// --java): parses and attributes every .java file under DIR with javac's own
// compiler API (com.sun.source; missing libraries only leave their names
// unresolved) and prints one JSON object: every use of a field, `x.f` and
// the bare `f` of an enclosing class alike, with the simple name of the
// class that declares the field (inherited fields name their base), and
// every (class, field) the sources declare. Columns are characters from 1;
// owner_cmp.py turns them into docqa's byte columns.
//
// Usage: java OwnerJava.java DIR   (Java 11 or later runs the source as is)

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class OwnerJava {
  static StringBuilder out = new StringBuilder();
  static boolean firstSite = true, firstDecl = true;

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') b.append('\\').append(ch);
      else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
      else b.append(ch);
    }
    return b.append('"').toString();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]).toAbsolutePath();
    List<File> files;
    try (Stream<Path> s = Files.walk(dir)) {
      files = s.filter(p -> p.toString().endsWith(".java"))
          .map(Path::toFile).sorted().collect(Collectors.toList());
    }
    JavaCompiler jc = ToolProvider.getSystemJavaCompiler();
    StandardJavaFileManager fm =
        jc.getStandardFileManager(null, null, StandardCharsets.UTF_8);
    JavacTask task = (JavacTask) jc.getTask(null, fm, d -> {},
        List.of("-proc:none", "-implicit:none", "-nowarn"), null,
        fm.getJavaFileObjectsFromFiles(files));
    List<CompilationUnitTree> units = new ArrayList<>();
    task.parse().forEach(units::add);
    task.analyze();
    Trees trees = Trees.instance(task);
    SourcePositions pos = trees.getSourcePositions();
    List<String> sites = new ArrayList<>(), decls = new ArrayList<>();
    for (CompilationUnitTree unit : units) {
      String rel = dir.relativize(Paths.get(unit.getSourceFile().toUri())).toString();
      new TreePathScanner<Void, Void>() {
        void site(Tree t, String name) {
          if (name.equals("this") || name.equals("super")) return;
          Element e = trees.getElement(getCurrentPath());
          if (e == null || e.getKind() != ElementKind.FIELD) return;
          Element owner = e.getEnclosingElement();
          if (owner == null || !(owner.getKind().isClass() || owner.getKind().isInterface()))
            return;
          long end = pos.getEndPosition(unit, t);
          if (end < 0) return;
          long at = end - name.length(); // the name ends the tree
          long line = unit.getLineMap().getLineNumber(at);
          long col = at - unit.getLineMap().getStartPosition(line) + 1;
          sites.add("{\"path\":" + quote(rel) + ",\"line\":" + line + ",\"col\":" + col
              + ",\"owner\":" + quote(owner.getSimpleName().toString())
              + ",\"name\":" + quote(name) + "}");
        }

        @Override
        public Void visitMemberSelect(MemberSelectTree t, Void v) {
          site(t, t.getIdentifier().toString());
          return super.visitMemberSelect(t, v);
        }

        @Override
        public Void visitIdentifier(IdentifierTree t, Void v) {
          site(t, t.getName().toString());
          return super.visitIdentifier(t, v);
        }

        @Override
        public Void visitVariable(VariableTree t, Void v) {
          Tree parent = getCurrentPath().getParentPath().getLeaf();
          if (parent instanceof ClassTree)
            decls.add("[" + quote(((ClassTree) parent).getSimpleName().toString())
                + "," + quote(t.getName().toString()) + "]");
          return super.visitVariable(t, v);
        }
      }.scan(new TreePath(unit), null);
    }
    System.out.println("{\"sites\":[" + String.join(",", sites) + "],\"declared\":["
        + String.join(",", decls) + "]}");
  }
}
