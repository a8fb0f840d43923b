/*
 * A small Iceberg REST catalog server for icemaint's tests (tests/test_catalog_matrix.py).
 *
 * It serves the REST catalog spec's routes that pyiceberg's and Spark's REST clients use
 * (config; namespaces: list, create, load, exists, drop, properties; tables: list, create,
 * stage-create, load, exists, commit, drop, purge, rename, register; metrics reports) with
 * Iceberg's own server-side request handling (org.apache.iceberg.rest.CatalogHandlers and
 * the REST JSON serializers) over a JdbcCatalog, on the JDK's built-in HTTP server. So both
 * clients talk to a real implementation of the protocol, and the commits are real
 * compare-and-swap commits in the JDBC catalog.
 *
 * It is a test fixture, not a product: no authentication, no multi-table transactions, no
 * views. Compiled at test time with javac against the Iceberg Spark runtime jar (see
 * tests/services/rest.py); never committed as a binary.
 *
 *   java -cp <classes>:<iceberg runtime>:<hadoop jars>:<sqlite jdbc> RestCatalogFixture FILE
 *
 * FILE is a Java properties file:
 *   host, port                 where to listen (port 0: any free port)
 *   catalog.<key>              JdbcCatalog properties (uri, warehouse, io-impl, jdbc.*, ...)
 *   hadoop.<key>               Hadoop configuration (fs.s3a.endpoint, ...) for HadoopFileIO
 * Prints "LISTENING <port>" on stdout once requests are served.
 */

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.JsonAutoDetect;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.PropertyAccessor;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.PropertyNamingStrategies;

public final class RestCatalogFixture {
  /** Status codes by exception, most specific first (the REST spec's error model). */
  private static final Object[][] ERROR_CODES = {
    {CommitStateUnknownException.class, 500},
    {CommitFailedException.class, 409},
    {AlreadyExistsException.class, 409},
    {NamespaceNotEmptyException.class, 409},
    {NoSuchNamespaceException.class, 404},
    {NoSuchTableException.class, 404},
    {NotFoundException.class, 404},
    {BadRequestException.class, 400},
    {ValidationException.class, 400},
    {IllegalArgumentException.class, 400},
    {UnsupportedOperationException.class, 406},
  };

  /** The routes this server answers; clients use no others (Spark's and pyiceberg's check). */
  private static final List<Endpoint> ENDPOINTS =
      Arrays.asList(
          Endpoint.V1_LIST_NAMESPACES,
          Endpoint.V1_LOAD_NAMESPACE,
          Endpoint.V1_NAMESPACE_EXISTS,
          Endpoint.V1_CREATE_NAMESPACE,
          Endpoint.V1_UPDATE_NAMESPACE,
          Endpoint.V1_DELETE_NAMESPACE,
          Endpoint.V1_LIST_TABLES,
          Endpoint.V1_LOAD_TABLE,
          Endpoint.V1_TABLE_EXISTS,
          Endpoint.V1_CREATE_TABLE,
          Endpoint.V1_UPDATE_TABLE,
          Endpoint.V1_DELETE_TABLE,
          Endpoint.V1_RENAME_TABLE,
          Endpoint.V1_REGISTER_TABLE,
          Endpoint.V1_REPORT_METRICS);

  private final JdbcCatalog catalog;
  private final ObjectMapper json;

  private RestCatalogFixture(JdbcCatalog catalog) {
    this.catalog = catalog;
    this.json = new ObjectMapper();
    json.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    json.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    json.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(json);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: RestCatalogFixture PROPERTIES_FILE");
      System.exit(2);
    }
    Properties settings = new Properties();
    try (Reader reader = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      settings.load(reader);
    }
    Map<String, String> catalogProperties = new HashMap<>();
    Configuration hadoop = new Configuration();
    for (String key : settings.stringPropertyNames()) {
      if (key.startsWith("catalog.")) {
        catalogProperties.put(key.substring("catalog.".length()), settings.getProperty(key));
      } else if (key.startsWith("hadoop.")) {
        hadoop.set(key.substring("hadoop.".length()), settings.getProperty(key));
      }
    }
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(hadoop);
    catalog.initialize(settings.getProperty("name", "rest_backend"), catalogProperties);

    RestCatalogFixture fixture = new RestCatalogFixture(catalog);
    String host = settings.getProperty("host", "127.0.0.1");
    int port = Integer.parseInt(settings.getProperty("port", "0"));
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 64);
    ExecutorService workers = Executors.newFixedThreadPool(8);
    server.setExecutor(workers);
    server.createContext("/", fixture::handle);
    server.start();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop(0);
                  workers.shutdownNow();
                  catalog.close();
                }));
    System.out.println("LISTENING " + server.getAddress().getPort());
    System.out.flush();
  }

  /** One HTTP exchange: route, call the handler, write JSON or the spec's error body. */
  private void handle(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    int status;
    Object body;
    try (InputStream in = exchange.getRequestBody()) {
      byte[] request = in.readAllBytes();
      Response response = route(method, rawPath, query(exchange.getRequestURI().getRawQuery()), request);
      status = response.status;
      body = response.body;
    } catch (RuntimeException e) {
      status = statusFor(e);
      if (status >= 500) {
        System.err.println("[rest-fixture] " + method + " " + rawPath + " failed:");
        e.printStackTrace();
      }
      body =
          ErrorResponse.builder()
              .responseCode(status)
              .withType(e.getClass().getSimpleName())
              .withMessage(String.valueOf(e.getMessage()))
              .build();
    }
    String error = body instanceof ErrorResponse ? " " + ((ErrorResponse) body).type() + ": " + ((ErrorResponse) body).message() : "";
    System.err.println("[rest-fixture] " + method + " " + rawPath + " -> " + status + error);
    if (body == null || "HEAD".equals(method)) {
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
      return;
    }
    byte[] bytes = json.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static final class Response {
    final int status;
    final Object body;

    Response(int status, Object body) {
      this.status = status;
      this.body = body;
    }

    static Response ok(Object body) {
      return new Response(200, body);
    }

    static Response noContent() {
      return new Response(204, null);
    }
  }

  private Response route(String method, String rawPath, Map<String, String> query, byte[] request) {
    String prefix = "/v1/";
    if (!rawPath.startsWith(prefix)) {
      throw new BadRequestException("no such route: %s %s", method, rawPath);
    }
    List<String> parts = new ArrayList<>();
    for (String segment : rawPath.substring(prefix.length()).split("/", -1)) {
      parts.add(decode(segment));
    }
    String shape = method + " " + routeShape(parts);
    switch (shape) {
      case "GET config":
        return Response.ok(ConfigResponse.builder().withEndpoints(ENDPOINTS).build());

      case "GET namespaces":
        {
          Namespace parent = query.containsKey("parent") ? namespace(query.get("parent")) : Namespace.empty();
          return Response.ok(
              query.containsKey("pageSize")
                  ? CatalogHandlers.listNamespaces(catalog, parent, query.get("pageToken"), query.get("pageSize"))
                  : CatalogHandlers.listNamespaces(catalog, parent));
        }
      case "POST namespaces":
        return Response.ok(CatalogHandlers.createNamespace(catalog, read(request, CreateNamespaceRequest.class)));
      case "GET namespaces/*":
        return Response.ok(CatalogHandlers.loadNamespace(catalog, namespace(parts.get(1))));
      case "HEAD namespaces/*":
        CatalogHandlers.namespaceExists(catalog, namespace(parts.get(1)));
        return Response.noContent();
      case "DELETE namespaces/*":
        CatalogHandlers.dropNamespace(catalog, namespace(parts.get(1)));
        return Response.noContent();
      case "POST namespaces/*/properties":
        return Response.ok(
            CatalogHandlers.updateNamespaceProperties(
                catalog, namespace(parts.get(1)), read(request, UpdateNamespacePropertiesRequest.class)));

      case "GET namespaces/*/tables":
        return Response.ok(
            query.containsKey("pageSize")
                ? CatalogHandlers.listTables(catalog, namespace(parts.get(1)), query.get("pageToken"), query.get("pageSize"))
                : CatalogHandlers.listTables(catalog, namespace(parts.get(1))));
      case "POST namespaces/*/tables":
        {
          CreateTableRequest create = read(request, CreateTableRequest.class);
          Namespace ns = namespace(parts.get(1));
          return Response.ok(
              create.stageCreate()
                  ? CatalogHandlers.stageTableCreate(catalog, ns, create)
                  : CatalogHandlers.createTable(catalog, ns, create));
        }
      case "POST namespaces/*/register":
        return Response.ok(
            CatalogHandlers.registerTable(catalog, namespace(parts.get(1)), read(request, RegisterTableRequest.class)));
      case "GET namespaces/*/tables/*":
        return Response.ok(CatalogHandlers.loadTable(catalog, table(parts)));
      case "HEAD namespaces/*/tables/*":
        CatalogHandlers.tableExists(catalog, table(parts));
        return Response.noContent();
      case "POST namespaces/*/tables/*":
        return Response.ok(CatalogHandlers.updateTable(catalog, table(parts), read(request, UpdateTableRequest.class)));
      case "DELETE namespaces/*/tables/*":
        if (Boolean.parseBoolean(query.getOrDefault("purgeRequested", "false"))) {
          CatalogHandlers.purgeTable(catalog, table(parts));
        } else {
          CatalogHandlers.dropTable(catalog, table(parts));
        }
        return Response.noContent();
      case "POST namespaces/*/tables/*/metrics":
        return Response.noContent(); // accepted and dropped: a fixture keeps no metrics
      case "POST tables/rename":
        CatalogHandlers.renameTable(catalog, read(request, RenameTableRequest.class));
        return Response.noContent();

      default:
        throw new BadRequestException("no such route: %s %s", method, rawPath);
    }
  }

  /** The route's shape with its variable segments as '*': "namespaces/*\/tables/*". */
  private static String routeShape(List<String> parts) {
    StringBuilder shape = new StringBuilder();
    for (int i = 0; i < parts.size(); i++) {
      boolean variable = (i == 1 && "namespaces".equals(parts.get(0))) || (i == 3 && "tables".equals(parts.get(2)));
      if (i > 0) {
        shape.append('/');
      }
      shape.append(variable ? "*" : parts.get(i));
    }
    return shape.toString();
  }

  private <T> T read(byte[] request, Class<T> type) {
    T value;
    try {
      value = json.readValue(request, type);
    } catch (IOException e) {
      throw new BadRequestException(e, "malformed %s: %s", type.getSimpleName(), e.getMessage());
    }
    if (value instanceof RESTRequest) {
      ((RESTRequest) value).validate();
    }
    return value;
  }

  /** A namespace from its path segment (levels separated by the unit separator, 0x1F). */
  private static Namespace namespace(String decoded) {
    return Namespace.of(decoded.split("\u001f", -1));
  }

  private static TableIdentifier table(List<String> parts) {
    return TableIdentifier.of(namespace(parts.get(1)), parts.get(3));
  }

  /** Percent-decoding that keeps '+' (a path segment is not form data). */
  private static String decode(String raw) {
    return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> values = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return values;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      values.put(URLDecoder.decode(key, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return values;
  }

  private static int statusFor(RuntimeException e) {
    for (Object[] entry : ERROR_CODES) {
      if (((Class<?>) entry[0]).isInstance(e)) {
        return (Integer) entry[1];
      }
    }
    return 500;
  }
}
