package floe.interop;

import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Run once at install time under -XX:ArchiveClassesAtExit: loads (without initialising) every class of the
 * jars given, so the class-data-sharing archive it leaves lets each later JVM (the driver, every CLI tool)
 * map those classes instead of parsing them again. On two shared cores that halves a tool's start-up CPU.
 */
public final class ClassWarmup {
  public static void main(String[] jars) throws Exception {
    ClassLoader loader = ClassWarmup.class.getClassLoader();
    int loaded = 0;
    for (String path : jars) {
      try (JarFile jar = new JarFile(path)) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          String name = e.nextElement().getName();
          if (!name.endsWith(".class") || name.startsWith("META-INF/") || name.endsWith("module-info.class")) continue;
          try {
            Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, loader);
            loaded++;
          } catch (Throwable ignored) {
            // A class whose optional dependency is absent is simply not archived.
          }
        }
      }
    }
    System.out.println("loaded " + loaded + " classes");
  }

  private ClassWarmup() {}
}
