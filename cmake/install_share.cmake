# What a site needs beside the binary, installed by `cmake --install` into
# both the Debian package and the container image (scripts/stage-image.sh):
#   lib/gpuscope/slurm/             the Slurm prolog, epilog and their library
#   share/gpuscope/prometheus/rules the alert and recording rules
#   share/gpuscope/kubernetes/      the PrometheusRule generated from them
#   share/gpuscope/grafana/         the dashboards and their provisioning
#   share/gpuscope/runbooks/        the runbooks the rules link to
#   share/gpuscope/reports/         the report thresholds
#   share/gpuscope/prometheus/      an example prometheus.yml (with targets/) beside rules/
#   share/gpuscope/fleet/           the Prometheus-agent and vmagent scrape configs
#   share/man/man1/gpuscope.1.gz    rendered from the built binary's --help
#   share/bash-completion/completions/gpuscope, share/zsh/vendor-completions/_gpuscope
#
# GPUSCOPE_RUNBOOK_URL_BASE is the one place that says where the runbooks are
# read: the rules' runbook_url, `baseline rules` and remediation events use it.
# The default is the copy installed here (every node and image has it); a site
# that serves the runbooks (a wiki, an internal web server) sets its address.

set(GPUSCOPE_DEFAULT_RUNBOOK_URL_BASE "file:///usr/share/gpuscope/runbooks/")
set(GPUSCOPE_RUNBOOK_URL_BASE "${GPUSCOPE_DEFAULT_RUNBOOK_URL_BASE}" CACHE STRING
    "Where alerts and remediation events link the runbooks (ends with /)")
if(NOT GPUSCOPE_RUNBOOK_URL_BASE MATCHES "^[a-z]+://[^ '\"]*/$")
  message(FATAL_ERROR "GPUSCOPE_RUNBOOK_URL_BASE must be a URL ending with / and without "
                      "blanks or quotes: '${GPUSCOPE_RUNBOOK_URL_BASE}'")
endif()
# Only the two sources that link runbooks see it (no rebuild of the rest).
set_property(SOURCE src/baseline/rules.cc src/remediate/triggers.cc APPEND PROPERTY
             COMPILE_DEFINITIONS "GPUSCOPE_RUNBOOK_URL_BASE=\"${GPUSCOPE_RUNBOOK_URL_BASE}\"")

# The manual page and the shell completions, from the binary just built, so
# they say what its --help says.
set(GPUSCOPE_MAN ${CMAKE_BINARY_DIR}/share/gpuscope.1.gz)
set(GPUSCOPE_BASH_COMPLETION ${CMAKE_BINARY_DIR}/share/gpuscope.bash)
set(GPUSCOPE_ZSH_COMPLETION ${CMAKE_BINARY_DIR}/share/_gpuscope)
add_custom_command(
  OUTPUT ${GPUSCOPE_MAN} ${GPUSCOPE_BASH_COMPLETION} ${GPUSCOPE_ZSH_COMPLETION}
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/gen-manpage.py $<TARGET_FILE:gpuscope>
          --version ${PROJECT_VERSION} --man ${GPUSCOPE_MAN}
          --bash ${GPUSCOPE_BASH_COMPLETION} --zsh ${GPUSCOPE_ZSH_COMPLETION}
  DEPENDS gpuscope ${CMAKE_SOURCE_DIR}/scripts/gen-manpage.py
  COMMENT "gpuscope.1 and shell completions from gpuscope --help")
add_custom_target(gpuscope_manpage ALL
                  DEPENDS ${GPUSCOPE_MAN} ${GPUSCOPE_BASH_COMPLETION} ${GPUSCOPE_ZSH_COMPLETION})
install(FILES ${GPUSCOPE_MAN} DESTINATION share/man/man1)
install(FILES ${GPUSCOPE_BASH_COMPLETION} DESTINATION share/bash-completion/completions
        RENAME gpuscope)
install(FILES ${GPUSCOPE_ZSH_COMPLETION} DESTINATION share/zsh/vendor-completions)

install(PROGRAMS deploy/slurm/gpuscope-prolog deploy/slurm/gpuscope-epilog
        DESTINATION lib/gpuscope/slurm)
install(FILES deploy/slurm/gpuscope-slurm-lib.sh DESTINATION lib/gpuscope/slurm)

set(share share/gpuscope)
install(DIRECTORY deploy/grafana/dashboards deploy/grafana/provisioning
        DESTINATION ${share}/grafana)
install(FILES deploy/reports/thresholds.yaml DESTINATION ${share}/reports)
install(DIRECTORY docs/runbooks/ DESTINATION ${share}/runbooks FILES_MATCHING PATTERN "*.md")
# `baseline rules` links alerts on extra signals to the baselines page.
install(FILES docs/baselines.md DESTINATION ${share}/runbooks)
# Example scrape configs: one Prometheus (its rule_files, rules/*.yml, are the
# installed rules beside it) and the fleet's Prometheus agent and vmagent.
install(FILES deploy/prometheus/prometheus.yml DESTINATION ${share}/prometheus)
install(FILES deploy/prometheus/targets/gpuscope.yml DESTINATION ${share}/prometheus/targets)
install(FILES deploy/fleet/scrape.yml deploy/fleet/prometheus-agent.yml deploy/fleet/README.md
        DESTINATION ${share}/fleet)

# The rules and the PrometheusRule, with the runbook links at the configured
# base (the committed files carry the default).
file(GLOB GPUSCOPE_RULE_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/prometheus/rules/*.yml)
foreach(source ${GPUSCOPE_RULE_FILES} ${CMAKE_SOURCE_DIR}/deploy/k8s/prometheusrule.yaml)
  get_filename_component(name ${source} NAME)
  if(name STREQUAL "prometheusrule.yaml")
    set(where ${share}/kubernetes)
  else()
    set(where ${share}/prometheus/rules)
  endif()
  install(CODE "
    file(READ \"${source}\" text)
    string(REPLACE \"${GPUSCOPE_DEFAULT_RUNBOOK_URL_BASE}\" \"${GPUSCOPE_RUNBOOK_URL_BASE}\"
           text \"\${text}\")
    set(out \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${where}/${name}\")
    message(STATUS \"Installing: \${out}\")
    file(WRITE \"\${out}\" \"\${text}\")
    file(CHMOD \"\${out}\" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)")
endforeach()
