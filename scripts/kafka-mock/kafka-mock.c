/*
 * kafka-mock: a standalone Kafka-protocol TEST broker built on librdkafka's
 * mock cluster (rdkafka_mock.h): by default built against the librdkafka
 * 2.15.1 that @confluentinc/kafka-javascript ships (scripts/services/kafka.sh),
 * or against Debian 12's librdkafka-dev 2.0.2 (OUTBOX_KAFKA_MOCK_LIBRDKAFKA=system).
 *
 * It is a test double, not a Kafka broker: in-memory only, a random port
 * unless one is given, no admin createTopics/deleteTopics, no
 * describe/listGroups (docs/development.md lists what each build serves).
 * Production users point the library at their real cluster.
 *
 * Usage: kafka-mock BOOTSTRAP_FILE PID_FILE [BROKER_COUNT [PORT]]
 *
 *   - PORT (0 or absent: random): broker 1 listens on PORT, broker N on
 *     PORT + N - 1, and the brokers advertise those ports in their metadata;
 *
 *   - writes its pid to PID_FILE;
 *   - writes the bootstrap address list (e.g. "127.0.0.1:41234") to
 *     BOOTSTRAP_FILE once the listeners are bound (atomic rename);
 *   - SIGUSR1: every broker goes down (connections closed, new ones refused;
 *     the port stays the same); SIGUSR2: every broker comes back up;
 *   - SIGTERM / SIGINT: destroys the cluster cleanly and exits 0.
 *
 * Topics are auto-created on first use (the mock's default: 4 partitions,
 * replication factor min(3, brokers)) when the client allows it: from
 * Metadata v4 on a request carries the client's AllowAutoTopicCreation, and
 * the 2.15.1 mock (Metadata v0-v12) honours it as Kafka does; the 2.0.2 one
 * serves Metadata v0-v2, which has no such field, and creates every topic a
 * client asks about. A Produce creates its topic in both.
 *
 * LeaveGroup is capped at v0-v2 on the 2.15.1 mock: it claims v0-v4 but its
 * handler reads and answers the v0-v2 layout only (see main()).
 *
 * Its connections have Nagle's algorithm off (TCP_NODELAY), as a Kafka
 * broker's have: see accept() at the end of this file.
 *
 * Build: scripts/services.sh up kafka; against Debian's librdkafka by hand:
 *   gcc -O2 -Wall -o kafka-mock kafka-mock.c $(pkg-config --cflags --libs rdkafka) -ldl
 */
/* RTLD_NEXT for the bind() and accept() wrappers below. */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t want_stop = 0;
static volatile sig_atomic_t want_down = 0;
static volatile sig_atomic_t want_up = 0;

static void on_signal(int sig) {
        switch (sig) {
        case SIGUSR1:
                want_down = 1;
                break;
        case SIGUSR2:
                want_up = 1;
                break;
        default:
                want_stop = 1;
                break;
        }
}

/* The port the next broker listener binds to; 0: random (the mock's own choice). */
static int next_port = 0;

/*
 * librdkafka's mock cluster (2.0.2 and 2.15.1) binds every broker listener to
 * 127.0.0.1 port 0 and has no setting for the port in 2.0.2. This definition of bind(2) in the
 * executable takes precedence over libc's for librdkafka too (symbol
 * interposition): a listener bound to port 0 gets the next requested port, so
 * its metadata advertises that port. Every other bind goes through untouched.
 */
int bind(int fd, const struct sockaddr *addr, socklen_t len) {
        static int (*real_bind)(int, const struct sockaddr *, socklen_t);
        struct sockaddr_in fixed;

        if (!real_bind)
                real_bind = (int (*)(int, const struct sockaddr *, socklen_t))
                    dlsym(RTLD_NEXT, "bind");
        if (next_port > 0 && addr && addr->sa_family == AF_INET &&
            len >= (socklen_t)sizeof(fixed)) {
                memcpy(&fixed, addr, sizeof(fixed));
                if (fixed.sin_port == 0) {
                        int on = 1;
                        fixed.sin_port = htons((uint16_t)next_port++);
                        /* a restart on the same port must not wait for TIME_WAIT */
                        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
                        return real_bind(fd, (const struct sockaddr *)&fixed,
                                         sizeof(fixed));
                }
        }
        return real_bind(fd, addr, len);
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
        char ts[32];
        struct timespec now;
        struct tm tm;
        va_list ap;

        clock_gettime(CLOCK_REALTIME, &now);
        localtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        printf("%s.%03ld kafka-mock[%ld]: ", ts, now.tv_nsec / 1000000L,
               (long)getpid());
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

/* Write content + "\n" to path via a temp file and rename(2). */
static int write_file_atomic(const char *path, const char *content) {
        size_t len = strlen(path) + 16;
        char *tmp = malloc(len);
        FILE *f;

        if (!tmp)
                return -1;
        snprintf(tmp, len, "%s.tmp", path);
        f = fopen(tmp, "w");
        if (!f) {
                free(tmp);
                return -1;
        }
        if (fprintf(f, "%s\n", content) < 0 || fclose(f) != 0) {
                unlink(tmp);
                free(tmp);
                return -1;
        }
        if (rename(tmp, path) != 0) {
                unlink(tmp);
                free(tmp);
                return -1;
        }
        free(tmp);
        return 0;
}

static void set_all_brokers(rd_kafka_mock_cluster_t *mcluster, int broker_cnt,
                            int up) {
        int id;

        /* Broker ids are 1..broker_cnt. Loop explicitly instead of relying on
         * broker_id -1 ("all"), which older librdkafka versions reject. */
        for (id = 1; id <= broker_cnt; id++) {
                rd_kafka_resp_err_t err =
                    up ? rd_kafka_mock_broker_set_up(mcluster, id)
                       : rd_kafka_mock_broker_set_down(mcluster, id);
                if (err)
                        log_line("broker %d set_%s failed: %s", id,
                                 up ? "up" : "down", rd_kafka_err2str(err));
        }
        log_line("%s: %d broker(s) %s", up ? "SIGUSR2" : "SIGUSR1", broker_cnt,
                 up ? "UP (accepting connections)"
                    : "DOWN (connections closed and refused)");
}

int main(int argc, char **argv) {
        const char *bootstrap_file, *pid_file;
        int broker_cnt = 1;
        char errstr[512];
        char pidbuf[32];
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;
        rd_kafka_mock_cluster_t *mcluster;
        const char *bootstraps;
        struct sigaction sa;

        if (argc < 3 || argc > 5) {
                fprintf(stderr,
                        "usage: %s BOOTSTRAP_FILE PID_FILE [BROKER_COUNT "
                        "[PORT]]\n",
                        argv[0]);
                return 2;
        }
        bootstrap_file = argv[1];
        pid_file = argv[2];
        if (argc >= 4) {
                char *end;
                long n = strtol(argv[3], &end, 10);
                if (*end || n < 1 || n > 32) {
                        fprintf(stderr, "invalid BROKER_COUNT: %s\n", argv[3]);
                        return 2;
                }
                broker_cnt = (int)n;
        }
        if (argc == 5) {
                char *end;
                long n = strtol(argv[4], &end, 10);
                if (*end || n < 0 || n + broker_cnt - 1 > 65535) {
                        fprintf(stderr, "invalid PORT: %s\n", argv[4]);
                        return 2;
                }
                next_port = (int)n;
        }

        setvbuf(stdout, NULL, _IOLBF, 0);

        /* Install handlers before librdkafka starts its threads. */
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGUSR2, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        unlink(bootstrap_file);
        snprintf(pidbuf, sizeof(pidbuf), "%ld", (long)getpid());
        if (write_file_atomic(pid_file, pidbuf) != 0) {
                fprintf(stderr, "cannot write pid file %s: %s\n", pid_file,
                        strerror(errno));
                return 1;
        }

        /* The rd_kafka_t only hosts the mock cluster (book keeping). */
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "client.id", "kafka-mock", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "conf: %s\n", errstr);
                return 1;
        }
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "rd_kafka_new failed: %s\n", errstr);
                unlink(pid_file);
                return 1;
        }

        mcluster = rd_kafka_mock_cluster_new(rk, broker_cnt);
        if (!mcluster) {
                fprintf(stderr, "rd_kafka_mock_cluster_new failed%s\n",
                        next_port ? " (is the port taken?)" : "");
                rd_kafka_destroy(rk);
                unlink(pid_file);
                return 1;
        }

#if RD_KAFKA_VERSION >= 0x020f0000
        /* The mock reports controller id 0 in its Metadata responses unless told
         * otherwise, and there is no broker 0: kafkajs sends InitProducerId (its
         * idempotent and transactional producers) and admin requests to the
         * controller and fails with "Broker 0 not found". Broker 1 is the
         * controller here. librdkafka 2.0.2 has no such setting;
         * rd_kafka_mock_set_controller_id is in 2.15. */
        rd_kafka_mock_set_controller_id(mcluster, 1);

        /* The 2.15.1 mock claims LeaveGroup v0-v4, but its handler
         * (rd_kafka_mock_handle_LeaveGroup) reads a v3 request as v0-v2's
         * group_id + member_id (v3 sends an array of members: it finds no
         * member, so the member stays in the group until its session times out)
         * and answers without v3's member array: kafkajs 2.2.4, which picks v3,
         * failed each consumer's disconnect with 'LeaveGroup(key: 13,
         * version: 3) The value of "offset" is out of range'. v0-v2 share the
         * layout the handler does read. 2.0.2 claims v0-v1, which it reads. */
        if (rd_kafka_mock_set_apiversion(mcluster, 13 /* LeaveGroup */, 0,
                                         2) != RD_KAFKA_RESP_ERR_NO_ERROR)
                log_line("could not cap LeaveGroup at v2");
#endif

        /* Listeners are bound once cluster_new returns. */
        bootstraps = rd_kafka_mock_cluster_bootstraps(mcluster);
        if (write_file_atomic(bootstrap_file, bootstraps) != 0) {
                fprintf(stderr, "cannot write bootstrap file %s: %s\n",
                        bootstrap_file, strerror(errno));
                rd_kafka_mock_cluster_destroy(mcluster);
                rd_kafka_destroy(rk);
                unlink(pid_file);
                return 1;
        }
        log_line("librdkafka %s mock cluster with %d broker(s) listening on %s",
                 rd_kafka_version_str(), broker_cnt, bootstraps);

        while (!want_stop) {
                if (want_down) {
                        want_down = 0;
                        set_all_brokers(mcluster, broker_cnt, 0);
                }
                if (want_up) {
                        want_up = 0;
                        set_all_brokers(mcluster, broker_cnt, 1);
                }
                /* Serves librdkafka events/logs; returns after <= 50 ms. */
                rd_kafka_poll(rk, 50);
        }

        log_line("shutting down");
        unlink(bootstrap_file);
        rd_kafka_mock_cluster_destroy(mcluster);
        rd_kafka_destroy(rk);
        unlink(pid_file);
        log_line("stopped");
        return 0;
}

/*
 * The mock cluster accepts its connections with accept() and leaves Nagle's
 * algorithm on; a Kafka broker turns it off on every connection. With it on,
 * a client that pipelines requests on one connection (librdkafka sends one
 * ProduceRequest per partition, several in flight) gets the first response at
 * once and every later one only when the client's delayed ACK of the previous
 * one arrives: 40 ms on Linux, for every round of sends. This definition in
 * the executable takes the place of libc's for librdkafka too, and sets
 * TCP_NODELAY on each accepted socket.
 */
int accept(int fd, struct sockaddr *addr, socklen_t *addrlen) {
        static int (*libc_accept)(int, struct sockaddr *, socklen_t *);
        int s, one = 1;

        if (!libc_accept)
                libc_accept = (int (*)(int, struct sockaddr *, socklen_t *))
                    dlsym(RTLD_NEXT, "accept");
        s = libc_accept(fd, addr, addrlen);
        if (s >= 0 && setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one,
                                 sizeof(one)) != 0)
                log_line("TCP_NODELAY on an accepted connection failed: %s",
                         strerror(errno));
        return s;
}
