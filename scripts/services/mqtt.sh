# scripts/services.sh, mqtt (mosquitto): sourced by services.sh, not run on its own.

MQTT_DIR="$RUN_DIR/mqtt"
mqtt_running() { pidfile_alive "$MQTT_DIR/mosquitto.pid" '^mosquitto$'; }

mqtt_ping() {
  mosquitto_sub -h 127.0.0.1 -p "$MQTT_PORT" -t "\$SYS/broker/version" -C 1 -W 1
}

up_mqtt() {
  check_traversable mosquitto mqtt
  ensure_port_free "$MQTT_PORT" mqtt
  safe_rm_dir "$MQTT_DIR"
  mkdir -p "$MQTT_DIR"
  # mosquitto drops to user mosquitto and exits silently if it cannot write
  # its pid/log files: the dir belongs to that user.
  cat >"$MQTT_DIR/mosquitto.conf" <<EOF
# written by scripts/services.sh
listener $MQTT_PORT 127.0.0.1
allow_anonymous true
# saved on shutdown and loaded on start: persistent sessions (clean start off, session
# expiry set), their subscriptions and queued QoS>0 messages survive stop/resume
persistence true
persistence_location $MQTT_DIR/
pid_file $MQTT_DIR/mosquitto.pid
log_dest file $MQTT_DIR/mosquitto.log
log_type error
log_type warning
log_type notice
log_type information
EOF
  chown -R mosquitto: "$MQTT_DIR"
  chmod 755 "$MQTT_DIR"
  start_mqtt
}

mqtt_has_data() { [[ -f "$MQTT_DIR/mosquitto.conf" ]]; }

start_mqtt() {
  check_traversable mosquitto mqtt
  ensure_port_free "$MQTT_PORT" mqtt
  mosquitto -c "$MQTT_DIR/mosquitto.conf" -d </dev/null >/dev/null 2>&1 9>&- ||
    die "mosquitto failed to start - see $MQTT_DIR/mosquitto.log"
  wait_until mqtt "$MQTT_DIR/mosquitto.log" "$TIMEOUT" mqtt_ping
}

down_mqtt() {
  local pid
  pid="$(pid_from_file "$MQTT_DIR/mosquitto.pid")" || return 0
  pid_alive "$pid" '^mosquitto$' || return 0
  kill_pid "$pid" mosquitto
}
