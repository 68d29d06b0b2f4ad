
export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]

export type Database = {
  
  "public": {
          Tables: {
            "acoes": {
                  Row: {
                    "ativo": boolean,"codigo": string,"descricao": string,"estrelas_exigidas": number | null,"exige_geolocalizacao": boolean,"exige_urgente": boolean,"janela_antes_min": number | null,"janela_depois_min": number | null,"nome": string,"pontos_base": number,"status_exigidos": (string)[]
                  }
                  ComputedFields: never
                  Insert: {
                    "ativo"?: boolean,"codigo": string,"descricao": string,"estrelas_exigidas"?: number | null,"exige_geolocalizacao"?: boolean,"exige_urgente"?: boolean,"janela_antes_min"?: number | null,"janela_depois_min"?: number | null,"nome": string,"pontos_base": number,"status_exigidos": (string)[]
                  }
                  Update: {
                    "ativo"?: boolean,"codigo"?: string,"descricao"?: string,"estrelas_exigidas"?: number | null,"exige_geolocalizacao"?: boolean,"exige_urgente"?: boolean,"janela_antes_min"?: number | null,"janela_depois_min"?: number | null,"nome"?: string,"pontos_base"?: number,"status_exigidos"?: (string)[]
                  }
                  Relationships: [
                    
                  ]
                },"api_keys": {
                  Row: {
                    "created_at": string,"created_by": string | null,"id": string,"last_used_at": string | null,"name": string,"prefix": string,"revoked_at": string | null,"user_id": string | null,"workspace_id": string | null
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"created_by"?: string | null,"id"?: string,"last_used_at"?: string | null,"name": string,"prefix": string,"revoked_at"?: string | null,"user_id"?: string | null,"workspace_id"?: string | null
                  }
                  Update: {
                    "created_at"?: string,"created_by"?: string | null,"id"?: string,"last_used_at"?: string | null,"name"?: string,"prefix"?: string,"revoked_at"?: string | null,"user_id"?: string | null,"workspace_id"?: string | null
                  }
                  Relationships: [
                    {
      foreignKeyName: "api_keys_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"audit_log": {
                  Row: {
                    "action": string,"actor_id": string | null,"created_at": string,"details": NonNullable<Json>,"entity_id": string,"entity_type": string,"id": number
                  }
                  ComputedFields: never
                  Insert: {
                    "action": string,"actor_id"?: string | null,"created_at"?: string,"details"?: NonNullable<Json>,"entity_id": string,"entity_type": string,"id"?: never
                  }
                  Update: {
                    "action"?: string,"actor_id"?: string | null,"created_at"?: string,"details"?: NonNullable<Json>,"entity_id"?: string,"entity_type"?: string,"id"?: never
                  }
                  Relationships: [
                    
                  ]
                },"badges": {
                  Row: {
                    "ativo": boolean,"categoria": string,"codigo": string,"descricao": string,"icone": string,"nome": string,"regra_acao": string | null,"regra_amostra": number | null,"regra_escopo": string | null,"regra_hora": number | null,"regra_janela_dias": number | null,"regra_minimo": number,"regra_tipo": string
                  }
                  ComputedFields: never
                  Insert: {
                    "ativo"?: boolean,"categoria": string,"codigo": string,"descricao": string,"icone": string,"nome": string,"regra_acao"?: string | null,"regra_amostra"?: number | null,"regra_escopo"?: string | null,"regra_hora"?: number | null,"regra_janela_dias"?: number | null,"regra_minimo": number,"regra_tipo": string
                  }
                  Update: {
                    "ativo"?: boolean,"categoria"?: string,"codigo"?: string,"descricao"?: string,"icone"?: string,"nome"?: string,"regra_acao"?: string | null,"regra_amostra"?: number | null,"regra_escopo"?: string | null,"regra_hora"?: number | null,"regra_janela_dias"?: number | null,"regra_minimo"?: number,"regra_tipo"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "badges_regra_acao_fkey"
      columns: ["regra_acao"]
isOneToOne: false
      referencedRelation: "acoes"
      referencedColumns: ["codigo"]
    }
                  ]
                },"billing_account_overrides": {
                  Row: {
                    "async_per_minute": number | null,"billing_account_id": string,"concurrent_runs": number | null,"logs_per_minute": number | null,"note": string | null,"subscription_price": number | null,"sync_per_minute": number | null,"updated_at": string,"usage_limit": number | null
                  }
                  ComputedFields: never
                  Insert: {
                    "async_per_minute"?: number | null,"billing_account_id": string,"concurrent_runs"?: number | null,"logs_per_minute"?: number | null,"note"?: string | null,"subscription_price"?: number | null,"sync_per_minute"?: number | null,"updated_at"?: string,"usage_limit"?: number | null
                  }
                  Update: {
                    "async_per_minute"?: number | null,"billing_account_id"?: string,"concurrent_runs"?: number | null,"logs_per_minute"?: number | null,"note"?: string | null,"subscription_price"?: number | null,"sync_per_minute"?: number | null,"updated_at"?: string,"usage_limit"?: number | null
                  }
                  Relationships: [
                    {
      foreignKeyName: "billing_account_overrides_billing_account_id_fkey"
      columns: ["billing_account_id"]
isOneToOne: true
      referencedRelation: "billing_accounts"
      referencedColumns: ["id"]
    }
                  ]
                },"billing_accounts": {
                  Row: {
                    "created_at": string,"id": string,"name": string,"owner_id": string,"plan": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"id"?: string,"name": string,"owner_id": string,"plan"?: string
                  }
                  Update: {
                    "created_at"?: string,"id"?: string,"name"?: string,"owner_id"?: string,"plan"?: string
                  }
                  Relationships: [
                    
                  ]
                },"billing_periods": {
                  Row: {
                    "billed_overage": number | null,"billing_account_id": string,"closed_at": string | null,"ends_at": string,"id": string,"included_usage": number | null,"overage": number | null,"plan": string | null,"seats": number | null,"starts_at": string,"status": string,"usage_cost": number | null
                  }
                  ComputedFields: never
                  Insert: {
                    "billed_overage"?: number | null,"billing_account_id": string,"closed_at"?: string | null,"ends_at": string,"id"?: string,"included_usage"?: number | null,"overage"?: number | null,"plan"?: string | null,"seats"?: number | null,"starts_at": string,"status"?: string,"usage_cost"?: number | null
                  }
                  Update: {
                    "billed_overage"?: number | null,"billing_account_id"?: string,"closed_at"?: string | null,"ends_at"?: string,"id"?: string,"included_usage"?: number | null,"overage"?: number | null,"plan"?: string | null,"seats"?: number | null,"starts_at"?: string,"status"?: string,"usage_cost"?: number | null
                  }
                  Relationships: [
                    {
      foreignKeyName: "billing_periods_billing_account_id_fkey"
      columns: ["billing_account_id"]
isOneToOne: false
      referencedRelation: "billing_accounts"
      referencedColumns: ["id"]
    }
                  ]
                },"billing_plans": {
                  Row: {
                    "async_per_minute": number,"bills_overage": boolean,"concurrent_runs": number,"execution_charge": number,"included_usage": number,"log_retention_days": number,"logs_per_minute": number,"name": string,"overage_threshold": number,"plan": string,"price_per_seat": boolean,"priority": number,"subscription_price": number,"sync_per_minute": number,"usage_limit": number
                  }
                  ComputedFields: never
                  Insert: {
                    "async_per_minute": number,"bills_overage"?: boolean,"concurrent_runs"?: number,"execution_charge"?: number,"included_usage"?: number,"log_retention_days"?: number,"logs_per_minute": number,"name": string,"overage_threshold"?: number,"plan": string,"price_per_seat"?: boolean,"priority": number,"subscription_price"?: number,"sync_per_minute": number,"usage_limit": number
                  }
                  Update: {
                    "async_per_minute"?: number,"bills_overage"?: boolean,"concurrent_runs"?: number,"execution_charge"?: number,"included_usage"?: number,"log_retention_days"?: number,"logs_per_minute"?: number,"name"?: string,"overage_threshold"?: number,"plan"?: string,"price_per_seat"?: boolean,"priority"?: number,"subscription_price"?: number,"sync_per_minute"?: number,"usage_limit"?: number
                  }
                  Relationships: [
                    
                  ]
                },"chamados": {
                  Row: {
                    "aceito_em": string | null,"agendado_para": string,"atualizado_em": string,"cancelado_em": string | null,"cancelado_por": string | null,"checkin_em": string | null,"checkin_latitude": number | null,"checkin_longitude": number | null,"checkout_em": string | null,"cidade_id": string,"criado_em": string,"estrelas": number | null,"id": string,"latitude": number,"longitude": number,"raio_checkin_m": number | null,"status": string,"tecnico_id": string,"urgente": boolean
                  }
                  ComputedFields: never
                  Insert: {
                    "aceito_em"?: string | null,"agendado_para": string,"atualizado_em"?: string,"cancelado_em"?: string | null,"cancelado_por"?: string | null,"checkin_em"?: string | null,"checkin_latitude"?: number | null,"checkin_longitude"?: number | null,"checkout_em"?: string | null,"cidade_id": string,"criado_em"?: string,"estrelas"?: number | null,"id"?: string,"latitude": number,"longitude": number,"raio_checkin_m"?: number | null,"status"?: string,"tecnico_id": string,"urgente"?: boolean
                  }
                  Update: {
                    "aceito_em"?: string | null,"agendado_para"?: string,"atualizado_em"?: string,"cancelado_em"?: string | null,"cancelado_por"?: string | null,"checkin_em"?: string | null,"checkin_latitude"?: number | null,"checkin_longitude"?: number | null,"checkout_em"?: string | null,"cidade_id"?: string,"criado_em"?: string,"estrelas"?: number | null,"id"?: string,"latitude"?: number,"longitude"?: number,"raio_checkin_m"?: number | null,"status"?: string,"tecnico_id"?: string,"urgente"?: boolean
                  }
                  Relationships: [
                    {
      foreignKeyName: "chamados_cidade_id_fkey"
      columns: ["cidade_id"]
isOneToOne: false
      referencedRelation: "cidades"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "chamados_tecnico_id_fkey"
      columns: ["tecnico_id"]
isOneToOne: false
      referencedRelation: "tecnicos"
      referencedColumns: ["id"]
    }
                  ]
                },"chat_deployments": {
                  Row: {
                    "allowed_emails": (string)[],"auth_type": Database["public"]['Enums']["chat_auth_type"],"auth_version": number,"created_at": string,"created_by": string | null,"description": string | null,"id": string,"identifier": string,"outputs": (string)[],"password_hash": string | null,"title": string,"updated_at": string,"welcome_message": string | null,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "allowed_emails"?: (string)[],"auth_type"?: Database["public"]['Enums']["chat_auth_type"],"auth_version"?: number,"created_at"?: string,"created_by"?: string | null,"description"?: string | null,"id"?: string,"identifier": string,"outputs"?: (string)[],"password_hash"?: string | null,"title": string,"updated_at"?: string,"welcome_message"?: string | null,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "allowed_emails"?: (string)[],"auth_type"?: Database["public"]['Enums']["chat_auth_type"],"auth_version"?: number,"created_at"?: string,"created_by"?: string | null,"description"?: string | null,"id"?: string,"identifier"?: string,"outputs"?: (string)[],"password_hash"?: string | null,"title"?: string,"updated_at"?: string,"welcome_message"?: string | null,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "chat_deployments_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"cidades": {
                  Row: {
                    "id": string,"nome": string,"raio_checkin_m": number,"uf": string
                  }
                  ComputedFields: never
                  Insert: {
                    "id": string,"nome": string,"raio_checkin_m"?: number,"uf": string
                  }
                  Update: {
                    "id"?: string,"nome"?: string,"raio_checkin_m"?: number,"uf"?: string
                  }
                  Relationships: [
                    
                  ]
                },"cidades_metricas": {
                  Row: {
                    "calculado_em": string,"chamados_90d": number,"cidade_id": string,"multiplicador_densidade": number,"multiplicador_tier": number,"tecnicos_ativos": number,"tier": number
                  }
                  ComputedFields: never
                  Insert: {
                    "calculado_em": string,"chamados_90d": number,"cidade_id": string,"multiplicador_densidade": number,"multiplicador_tier": number,"tecnicos_ativos": number,"tier": number
                  }
                  Update: {
                    "calculado_em"?: string,"chamados_90d"?: number,"cidade_id"?: string,"multiplicador_densidade"?: number,"multiplicador_tier"?: number,"tecnicos_ativos"?: number,"tier"?: number
                  }
                  Relationships: [
                    {
      foreignKeyName: "cidades_metricas_cidade_id_fkey"
      columns: ["cidade_id"]
isOneToOne: true
      referencedRelation: "cidades"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "cidades_metricas_tier_fkey"
      columns: ["tier"]
isOneToOne: false
      referencedRelation: "faixas_tier"
      referencedColumns: ["tier"]
    }
                  ]
                },"commissions": {
                  Row: {
                    "amount": number,"base_value": number,"carrier_payment_date": string,"commission_percentage": number,"created_at": string,"id": string,"order_id": string,"paid_at": string | null,"portal_payment_date": string,"sale_date": string,"status": Database["public"]['Enums']["commission_status"],"technician_id": string,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "amount": number,"base_value": number,"carrier_payment_date": string,"commission_percentage": number,"created_at"?: string,"id"?: string,"order_id": string,"paid_at"?: string | null,"portal_payment_date": string,"sale_date": string,"status"?: Database["public"]['Enums']["commission_status"],"technician_id": string,"updated_at"?: string
                  }
                  Update: {
                    "amount"?: number,"base_value"?: number,"carrier_payment_date"?: string,"commission_percentage"?: number,"created_at"?: string,"id"?: string,"order_id"?: string,"paid_at"?: string | null,"portal_payment_date"?: string,"sale_date"?: string,"status"?: Database["public"]['Enums']["commission_status"],"technician_id"?: string,"updated_at"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "commissions_order_id_fkey"
      columns: ["order_id"]
isOneToOne: true
      referencedRelation: "orders"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "commissions_technician_id_fkey"
      columns: ["technician_id"]
isOneToOne: false
      referencedRelation: "profiles"
      referencedColumns: ["user_id"]
    }
                  ]
                },"customers": {
                  Row: {
                    "city": string | null,"cnpj": string,"company_name": string,"contact_name": string,"created_at": string,"email": string,"id": string,"phone": string,"postal_code": string | null,"state": string | null,"street": string | null,"technician_id": string,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "city"?: string | null,"cnpj": string,"company_name": string,"contact_name": string,"created_at"?: string,"email": string,"id"?: string,"phone": string,"postal_code"?: string | null,"state"?: string | null,"street"?: string | null,"technician_id"?: string,"updated_at"?: string
                  }
                  Update: {
                    "city"?: string | null,"cnpj"?: string,"company_name"?: string,"contact_name"?: string,"created_at"?: string,"email"?: string,"id"?: string,"phone"?: string,"postal_code"?: string | null,"state"?: string | null,"street"?: string | null,"technician_id"?: string,"updated_at"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "customers_technician_id_fkey"
      columns: ["technician_id"]
isOneToOne: false
      referencedRelation: "profiles"
      referencedColumns: ["user_id"]
    }
                  ]
                },"environment_variables": {
                  Row: {
                    "created_at": string,"created_by": string | null,"id": string,"name": string,"updated_at": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"created_by"?: string | null,"id"?: string,"name": string,"updated_at"?: string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"created_by"?: string | null,"id"?: string,"name"?: string,"updated_at"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "environment_variables_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"faixas_tier": {
                  Row: {
                    "chamados_minimos": number,"multiplicador": number,"tier": number
                  }
                  ComputedFields: never
                  Insert: {
                    "chamados_minimos": number,"multiplicador": number,"tier": number
                  }
                  Update: {
                    "chamados_minimos"?: number,"multiplicador"?: number,"tier"?: number
                  }
                  Relationships: [
                    
                  ]
                },"folders": {
                  Row: {
                    "created_at": string,"id": string,"name": string,"parent_id": string | null,"updated_at": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"id"?: string,"name": string,"parent_id"?: string | null,"updated_at"?: string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"id"?: string,"name"?: string,"parent_id"?: string | null,"updated_at"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "folders_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "folders_workspace_id_parent_id_fkey"
      columns: ["workspace_id","parent_id"]
isOneToOne: false
      referencedRelation: "folders"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"historico_pontos": {
                  Row: {
                    "acao": string,"chamado_id": string,"cidade_id": string,"data_acao": string,"distancia_m": number | null,"id": number,"metadata": NonNullable<Json>,"multiplicador_densidade": number,"multiplicador_nivel": number,"multiplicador_tier": number,"nivel_antes": string,"pontos_base": number,"pontos_final": number,"registrado_por": string | null,"tecnicos_ativos": number,"tier": number,"usuario_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "acao": string,"chamado_id": string,"cidade_id": string,"data_acao"?: string,"distancia_m"?: number | null,"id"?: never,"metadata"?: NonNullable<Json>,"multiplicador_densidade": number,"multiplicador_nivel": number,"multiplicador_tier": number,"nivel_antes": string,"pontos_base": number,"pontos_final": number,"registrado_por"?: string | null,"tecnicos_ativos": number,"tier": number,"usuario_id": string
                  }
                  Update: {
                    "acao"?: string,"chamado_id"?: string,"cidade_id"?: string,"data_acao"?: string,"distancia_m"?: number | null,"id"?: never,"metadata"?: NonNullable<Json>,"multiplicador_densidade"?: number,"multiplicador_nivel"?: number,"multiplicador_tier"?: number,"nivel_antes"?: string,"pontos_base"?: number,"pontos_final"?: number,"registrado_por"?: string | null,"tecnicos_ativos"?: number,"tier"?: number,"usuario_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "historico_pontos_acao_fkey"
      columns: ["acao"]
isOneToOne: false
      referencedRelation: "acoes"
      referencedColumns: ["codigo"]
    },{
      foreignKeyName: "historico_pontos_chamado_id_fkey"
      columns: ["chamado_id"]
isOneToOne: false
      referencedRelation: "chamados"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "historico_pontos_cidade_id_fkey"
      columns: ["cidade_id"]
isOneToOne: false
      referencedRelation: "cidades"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "historico_pontos_nivel_antes_fkey"
      columns: ["nivel_antes"]
isOneToOne: false
      referencedRelation: "niveis"
      referencedColumns: ["slug"]
    },{
      foreignKeyName: "historico_pontos_usuario_id_fkey"
      columns: ["usuario_id"]
isOneToOne: false
      referencedRelation: "tecnicos"
      referencedColumns: ["id"]
    }
                  ]
                },"holidays": {
                  Row: {
                    "created_at": string,"holiday_date": string,"kind": string,"name": string,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"holiday_date": string,"kind"?: string,"name": string,"updated_at"?: string
                  }
                  Update: {
                    "created_at"?: string,"holiday_date"?: string,"kind"?: string,"name"?: string,"updated_at"?: string
                  }
                  Relationships: [
                    
                  ]
                },"invoice_lines": {
                  Row: {
                    "amount": number,"description": string,"id": string,"invoice_id": string,"kind": string,"quantity": number,"unit_price": number
                  }
                  ComputedFields: never
                  Insert: {
                    "amount": number,"description": string,"id"?: string,"invoice_id": string,"kind": string,"quantity": number,"unit_price": number
                  }
                  Update: {
                    "amount"?: number,"description"?: string,"id"?: string,"invoice_id"?: string,"kind"?: string,"quantity"?: number,"unit_price"?: number
                  }
                  Relationships: [
                    {
      foreignKeyName: "invoice_lines_invoice_id_fkey"
      columns: ["invoice_id"]
isOneToOne: false
      referencedRelation: "invoices"
      referencedColumns: ["id"]
    }
                  ]
                },"invoices": {
                  Row: {
                    "bill_to": string | null,"billing_account_id": string,"currency": string,"id": string,"issued_at": string,"kind": string,"period_id": string,"total": number
                  }
                  ComputedFields: never
                  Insert: {
                    "bill_to"?: string | null,"billing_account_id": string,"currency"?: string,"id"?: string,"issued_at"?: string,"kind": string,"period_id": string,"total": number
                  }
                  Update: {
                    "bill_to"?: string | null,"billing_account_id"?: string,"currency"?: string,"id"?: string,"issued_at"?: string,"kind"?: string,"period_id"?: string,"total"?: number
                  }
                  Relationships: [
                    {
      foreignKeyName: "invoices_billing_account_id_fkey"
      columns: ["billing_account_id"]
isOneToOne: false
      referencedRelation: "billing_accounts"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "invoices_period_id_fkey"
      columns: ["period_id"]
isOneToOne: false
      referencedRelation: "billing_periods"
      referencedColumns: ["id"]
    }
                  ]
                },"model_prices": {
                  Row: {
                    "created_at": string,"effective_from": string,"hosted_multiplier": number,"id": string,"input_per_million": number,"model": string,"output_per_million": number,"provider": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"effective_from": string,"hosted_multiplier"?: number,"id"?: string,"input_per_million": number,"model": string,"output_per_million": number,"provider": string
                  }
                  Update: {
                    "created_at"?: string,"effective_from"?: string,"hosted_multiplier"?: number,"id"?: string,"input_per_million"?: number,"model"?: string,"output_per_million"?: number,"provider"?: string
                  }
                  Relationships: [
                    
                  ]
                },"niveis": {
                  Row: {
                    "multiplicador": number,"nome": string,"ordem": number,"pontos_minimos": number,"slug": string
                  }
                  ComputedFields: never
                  Insert: {
                    "multiplicador": number,"nome": string,"ordem": number,"pontos_minimos": number,"slug": string
                  }
                  Update: {
                    "multiplicador"?: number,"nome"?: string,"ordem"?: number,"pontos_minimos"?: number,"slug"?: string
                  }
                  Relationships: [
                    
                  ]
                },"orders": {
                  Row: {
                    "cancelled_at": string | null,"created_at": string,"id": string,"ordered_at": string,"proposal_id": string,"status": Database["public"]['Enums']["order_status"],"technician_id": string,"total_value": number,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "cancelled_at"?: string | null,"created_at"?: string,"id"?: string,"ordered_at"?: string,"proposal_id": string,"status"?: Database["public"]['Enums']["order_status"],"technician_id": string,"total_value": number,"updated_at"?: string
                  }
                  Update: {
                    "cancelled_at"?: string | null,"created_at"?: string,"id"?: string,"ordered_at"?: string,"proposal_id"?: string,"status"?: Database["public"]['Enums']["order_status"],"technician_id"?: string,"total_value"?: number,"updated_at"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "orders_proposal_id_fkey"
      columns: ["proposal_id"]
isOneToOne: true
      referencedRelation: "proposals"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "orders_technician_id_fkey"
      columns: ["technician_id"]
isOneToOne: false
      referencedRelation: "profiles"
      referencedColumns: ["user_id"]
    }
                  ]
                },"products": {
                  Row: {
                    "commission_percentage": number,"created_at": string,"description": string,"id": string,"is_active": boolean,"monthly_price": number,"name": string,"price": number,"product_type": string,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "commission_percentage": number,"created_at"?: string,"description"?: string,"id"?: string,"is_active"?: boolean,"monthly_price": number,"name": string,"price"?: number,"product_type": string,"updated_at"?: string
                  }
                  Update: {
                    "commission_percentage"?: number,"created_at"?: string,"description"?: string,"id"?: string,"is_active"?: boolean,"monthly_price"?: number,"name"?: string,"price"?: number,"product_type"?: string,"updated_at"?: string
                  }
                  Relationships: [
                    
                  ]
                },"profiles": {
                  Row: {
                    "created_at": string,"email": string | null,"full_name": string,"updated_at": string,"user_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"email"?: string | null,"full_name"?: string,"updated_at"?: string,"user_id": string
                  }
                  Update: {
                    "created_at"?: string,"email"?: string | null,"full_name"?: string,"updated_at"?: string,"user_id"?: string
                  }
                  Relationships: [
                    
                  ]
                },"proposals": {
                  Row: {
                    "activated_at": string | null,"approval_token_expires_at": string,"approval_token_used_at": string | null,"cancelled_at": string | null,"code": string,"contract_months": number,"created_at": string,"customer_id": string,"id": string,"monthly_value": number,"notes": string | null,"product_id": string,"status": Database["public"]['Enums']["proposal_status"],"technician_id": string,"total_value": number,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "activated_at"?: string | null,"approval_token_expires_at": string,"approval_token_used_at"?: string | null,"cancelled_at"?: string | null,"code": string,"contract_months": number,"created_at"?: string,"customer_id": string,"id"?: string,"monthly_value": number,"notes"?: string | null,"product_id": string,"status"?: Database["public"]['Enums']["proposal_status"],"technician_id"?: string,"total_value": number,"updated_at"?: string
                  }
                  Update: {
                    "activated_at"?: string | null,"approval_token_expires_at"?: string,"approval_token_used_at"?: string | null,"cancelled_at"?: string | null,"code"?: string,"contract_months"?: number,"created_at"?: string,"customer_id"?: string,"id"?: string,"monthly_value"?: number,"notes"?: string | null,"product_id"?: string,"status"?: Database["public"]['Enums']["proposal_status"],"technician_id"?: string,"total_value"?: number,"updated_at"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "proposals_customer_id_fkey"
      columns: ["customer_id"]
isOneToOne: false
      referencedRelation: "customers"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "proposals_product_id_fkey"
      columns: ["product_id"]
isOneToOne: false
      referencedRelation: "products"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "proposals_technician_id_fkey"
      columns: ["technician_id"]
isOneToOne: false
      referencedRelation: "profiles"
      referencedColumns: ["user_id"]
    }
                  ]
                },"tecnicos": {
                  Row: {
                    "ativo": boolean,"avatar_url": string | null,"badges_count": number,"cidade_id": string,"criado_em": string,"id": string,"nivel": string,"nome": string,"pontos_total": number,"ultima_pontuacao_em": string | null
                  }
                  ComputedFields: never
                  Insert: {
                    "ativo"?: boolean,"avatar_url"?: string | null,"badges_count"?: number,"cidade_id": string,"criado_em"?: string,"id": string,"nivel"?: string,"nome": string,"pontos_total"?: number,"ultima_pontuacao_em"?: string | null
                  }
                  Update: {
                    "ativo"?: boolean,"avatar_url"?: string | null,"badges_count"?: number,"cidade_id"?: string,"criado_em"?: string,"id"?: string,"nivel"?: string,"nome"?: string,"pontos_total"?: number,"ultima_pontuacao_em"?: string | null
                  }
                  Relationships: [
                    {
      foreignKeyName: "tecnicos_cidade_id_fkey"
      columns: ["cidade_id"]
isOneToOne: false
      referencedRelation: "cidades"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "tecnicos_nivel_fkey"
      columns: ["nivel"]
isOneToOne: false
      referencedRelation: "niveis"
      referencedColumns: ["slug"]
    }
                  ]
                },"usage_ledger": {
                  Row: {
                    "amount": number,"billing_account_id": string,"created_at": string,"execution_id": string,"kind": Database["public"]['Enums']["usage_charge_kind"],"period_id": string,"workflow_id": string | null,"workspace_id": string | null
                  }
                  ComputedFields: never
                  Insert: {
                    "amount": number,"billing_account_id": string,"created_at"?: string,"execution_id": string,"kind": Database["public"]['Enums']["usage_charge_kind"],"period_id": string,"workflow_id"?: string | null,"workspace_id"?: string | null
                  }
                  Update: {
                    "amount"?: number,"billing_account_id"?: string,"created_at"?: string,"execution_id"?: string,"kind"?: Database["public"]['Enums']["usage_charge_kind"],"period_id"?: string,"workflow_id"?: string | null,"workspace_id"?: string | null
                  }
                  Relationships: [
                    
                  ]
                },"user_roles": {
                  Row: {
                    "created_at": string,"id": number,"role": Database["public"]['Enums']["app_role"],"updated_at": string,"user_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"id"?: never,"role": Database["public"]['Enums']["app_role"],"updated_at"?: string,"user_id": string
                  }
                  Update: {
                    "created_at"?: string,"id"?: never,"role"?: Database["public"]['Enums']["app_role"],"updated_at"?: string,"user_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "user_roles_user_id_fkey"
      columns: ["user_id"]
isOneToOne: false
      referencedRelation: "profiles"
      referencedColumns: ["user_id"]
    }
                  ]
                },"usuario_badges": {
                  Row: {
                    "badge_codigo": string,"conquistado_em": string,"historico_id": number | null,"periodo_inicio": string | null,"usuario_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "badge_codigo": string,"conquistado_em"?: string,"historico_id"?: number | null,"periodo_inicio"?: string | null,"usuario_id": string
                  }
                  Update: {
                    "badge_codigo"?: string,"conquistado_em"?: string,"historico_id"?: number | null,"periodo_inicio"?: string | null,"usuario_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "usuario_badges_badge_codigo_fkey"
      columns: ["badge_codigo"]
isOneToOne: false
      referencedRelation: "badges"
      referencedColumns: ["codigo"]
    },{
      foreignKeyName: "usuario_badges_historico_id_fkey"
      columns: ["historico_id"]
isOneToOne: false
      referencedRelation: "historico_pontos"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "usuario_badges_usuario_id_fkey"
      columns: ["usuario_id"]
isOneToOne: false
      referencedRelation: "tecnicos"
      referencedColumns: ["id"]
    }
                  ]
                },"webhook_deliveries": {
                  Row: {
                    "attempt_started_at": string | null,"attempts": number,"created_at": string,"delivered_at": string | null,"execution_id": string,"failed_at": string | null,"id": string,"last_attempt_at": string | null,"last_error": string | null,"last_response_excerpt": string | null,"last_status_code": number | null,"message_id": number | null,"next_attempt_at": string | null,"redeliveries": number,"round_attempts": number,"status": Database["public"]['Enums']["webhook_delivery_status"],"subscription_id": string,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "attempt_started_at"?: string | null,"attempts"?: number,"created_at"?: string,"delivered_at"?: string | null,"execution_id": string,"failed_at"?: string | null,"id"?: string,"last_attempt_at"?: string | null,"last_error"?: string | null,"last_response_excerpt"?: string | null,"last_status_code"?: number | null,"message_id"?: number | null,"next_attempt_at"?: string | null,"redeliveries"?: number,"round_attempts"?: number,"status"?: Database["public"]['Enums']["webhook_delivery_status"],"subscription_id": string,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "attempt_started_at"?: string | null,"attempts"?: number,"created_at"?: string,"delivered_at"?: string | null,"execution_id"?: string,"failed_at"?: string | null,"id"?: string,"last_attempt_at"?: string | null,"last_error"?: string | null,"last_response_excerpt"?: string | null,"last_status_code"?: number | null,"message_id"?: number | null,"next_attempt_at"?: string | null,"redeliveries"?: number,"round_attempts"?: number,"status"?: Database["public"]['Enums']["webhook_delivery_status"],"subscription_id"?: string,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "webhook_deliveries_execution_id_fkey"
      columns: ["execution_id"]
isOneToOne: false
      referencedRelation: "workflow_executions"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "webhook_deliveries_subscription_id_fkey"
      columns: ["subscription_id"]
isOneToOne: false
      referencedRelation: "webhook_subscriptions"
      referencedColumns: ["id"]
    }
                  ]
                },"webhook_delivery_attempts": {
                  Row: {
                    "attempt": number,"delivery_id": string,"duration_ms": number | null,"error": string | null,"id": number,"next_attempt_at": string | null,"outcome": Database["public"]['Enums']["webhook_attempt_outcome"],"response_excerpt": string | null,"started_at": string,"status_code": number | null,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "attempt": number,"delivery_id": string,"duration_ms"?: number | null,"error"?: string | null,"id"?: never,"next_attempt_at"?: string | null,"outcome": Database["public"]['Enums']["webhook_attempt_outcome"],"response_excerpt"?: string | null,"started_at": string,"status_code"?: number | null,"workspace_id": string
                  }
                  Update: {
                    "attempt"?: number,"delivery_id"?: string,"duration_ms"?: number | null,"error"?: string | null,"id"?: never,"next_attempt_at"?: string | null,"outcome"?: Database["public"]['Enums']["webhook_attempt_outcome"],"response_excerpt"?: string | null,"started_at"?: string,"status_code"?: number | null,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "webhook_delivery_attempts_delivery_id_fkey"
      columns: ["delivery_id"]
isOneToOne: false
      referencedRelation: "webhook_deliveries"
      referencedColumns: ["id"]
    }
                  ]
                },"webhook_subscriptions": {
                  Row: {
                    "active": boolean,"consecutive_dead_deliveries": number,"created_at": string,"created_by": string | null,"dead_since": string | null,"disable_after_dead_deliveries": number,"disable_after_dead_minutes": number,"disabled_at": string | null,"disabled_reason": string | null,"has_secret": boolean,"id": string,"include_final_output": boolean,"include_rate_limits": boolean,"include_trace_spans": boolean,"include_usage_data": boolean,"level_filter": (Database["public"]['Enums']["workflow_log_level"])[],"secret": string | null,"trigger_filter": (Database["public"]['Enums']["workflow_trigger"])[],"updated_at": string,"url": string,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "active"?: boolean,"consecutive_dead_deliveries"?: number,"created_at"?: string,"created_by"?: string | null,"dead_since"?: string | null,"disable_after_dead_deliveries"?: number,"disable_after_dead_minutes"?: number,"disabled_at"?: string | null,"disabled_reason"?: string | null,"has_secret"?: boolean,"id"?: string,"include_final_output"?: boolean,"include_rate_limits"?: boolean,"include_trace_spans"?: boolean,"include_usage_data"?: boolean,"level_filter"?: (Database["public"]['Enums']["workflow_log_level"])[],"secret"?: string | null,"trigger_filter"?: (Database["public"]['Enums']["workflow_trigger"])[],"updated_at"?: string,"url": string,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "active"?: boolean,"consecutive_dead_deliveries"?: number,"created_at"?: string,"created_by"?: string | null,"dead_since"?: string | null,"disable_after_dead_deliveries"?: number,"disable_after_dead_minutes"?: number,"disabled_at"?: string | null,"disabled_reason"?: string | null,"has_secret"?: boolean,"id"?: string,"include_final_output"?: boolean,"include_rate_limits"?: boolean,"include_trace_spans"?: boolean,"include_usage_data"?: boolean,"level_filter"?: (Database["public"]['Enums']["workflow_log_level"])[],"secret"?: string | null,"trigger_filter"?: (Database["public"]['Enums']["workflow_trigger"])[],"updated_at"?: string,"url"?: string,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "webhook_subscriptions_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_alert_events": {
                  Row: {
                    "attempts": number,"channel": Database["public"]['Enums']["workflow_alert_channel"],"data": NonNullable<Json>,"delivery": Database["public"]['Enums']["workflow_alert_delivery"],"email_to": (string)[],"fired_at": string,"id": string,"kind": Database["public"]['Enums']["workflow_alert_kind"] | null,"last_error": string | null,"message": string,"observed": number | null,"rule_id": string | null,"sent_at": string | null,"source": Database["public"]['Enums']["workflow_alert_source"],"subject": string,"webhook_subscription_id": string | null,"workflow_id": string | null,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "attempts"?: number,"channel": Database["public"]['Enums']["workflow_alert_channel"],"data"?: NonNullable<Json>,"delivery"?: Database["public"]['Enums']["workflow_alert_delivery"],"email_to"?: (string)[],"fired_at": string,"id"?: string,"kind"?: Database["public"]['Enums']["workflow_alert_kind"] | null,"last_error"?: string | null,"message": string,"observed"?: number | null,"rule_id"?: string | null,"sent_at"?: string | null,"source"?: Database["public"]['Enums']["workflow_alert_source"],"subject": string,"webhook_subscription_id"?: string | null,"workflow_id"?: string | null,"workspace_id": string
                  }
                  Update: {
                    "attempts"?: number,"channel"?: Database["public"]['Enums']["workflow_alert_channel"],"data"?: NonNullable<Json>,"delivery"?: Database["public"]['Enums']["workflow_alert_delivery"],"email_to"?: (string)[],"fired_at"?: string,"id"?: string,"kind"?: Database["public"]['Enums']["workflow_alert_kind"] | null,"last_error"?: string | null,"message"?: string,"observed"?: number | null,"rule_id"?: string | null,"sent_at"?: string | null,"source"?: Database["public"]['Enums']["workflow_alert_source"],"subject"?: string,"webhook_subscription_id"?: string | null,"workflow_id"?: string | null,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_alert_events_rule_id_fkey"
      columns: ["rule_id"]
isOneToOne: false
      referencedRelation: "workflow_alert_rules"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_alert_events_webhook_subscription_id_fkey"
      columns: ["webhook_subscription_id"]
isOneToOne: false
      referencedRelation: "webhook_subscriptions"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_alert_events_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"workflow_alert_rules": {
                  Row: {
                    "channel": Database["public"]['Enums']["workflow_alert_channel"],"cooldown_minutes": number,"created_at": string,"created_by": string | null,"email_to": (string)[],"enabled": boolean,"firing": boolean,"id": string,"kind": Database["public"]['Enums']["workflow_alert_kind"],"last_fired_at": string | null,"min_runs": number,"name": string,"threshold": number | null,"updated_at": string,"webhook_subscription_id": string | null,"window_minutes": number,"workflow_id": string | null,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "channel": Database["public"]['Enums']["workflow_alert_channel"],"cooldown_minutes"?: number,"created_at"?: string,"created_by"?: string | null,"email_to"?: (string)[],"enabled"?: boolean,"firing"?: boolean,"id"?: string,"kind": Database["public"]['Enums']["workflow_alert_kind"],"last_fired_at"?: string | null,"min_runs"?: number,"name": string,"threshold"?: number | null,"updated_at"?: string,"webhook_subscription_id"?: string | null,"window_minutes"?: number,"workflow_id"?: string | null,"workspace_id": string
                  }
                  Update: {
                    "channel"?: Database["public"]['Enums']["workflow_alert_channel"],"cooldown_minutes"?: number,"created_at"?: string,"created_by"?: string | null,"email_to"?: (string)[],"enabled"?: boolean,"firing"?: boolean,"id"?: string,"kind"?: Database["public"]['Enums']["workflow_alert_kind"],"last_fired_at"?: string | null,"min_runs"?: number,"name"?: string,"threshold"?: number | null,"updated_at"?: string,"webhook_subscription_id"?: string | null,"window_minutes"?: number,"workflow_id"?: string | null,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_alert_rules_webhook_subscription_id_fkey"
      columns: ["webhook_subscription_id"]
isOneToOne: false
      referencedRelation: "webhook_subscriptions"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_alert_rules_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_alert_rules_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_deployments": {
                  Row: {
                    "activated_at": string | null,"created_at": string,"created_by": string | null,"flow_control": Json | null,"id": string,"is_active": boolean,"note": string | null,"state": NonNullable<Json>,"version": number,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "activated_at"?: string | null,"created_at"?: string,"created_by"?: string | null,"flow_control"?: never,"id"?: string,"is_active"?: boolean,"note"?: string | null,"state": NonNullable<Json>,"version": number,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "activated_at"?: string | null,"created_at"?: string,"created_by"?: string | null,"flow_control"?: never,"id"?: string,"is_active"?: boolean,"note"?: string | null,"state"?: NonNullable<Json>,"version"?: number,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_deployments_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_execution_snapshots": {
                  Row: {
                    "created_at": string,"id": string,"state": NonNullable<Json>,"state_hash": string,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"id"?: string,"state": NonNullable<Json>,"state_hash": string,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"id"?: string,"state"?: NonNullable<Json>,"state_hash"?: string,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_execution_snapshots_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_executions": {
                  Row: {
                    "api_key_id": string | null,"attempt": number,"billing_account_id": string,"cancel_reason": string | null,"cancel_requested_at": string | null,"cancel_requested_by": Json | null,"concurrency_key": string | null,"concurrency_key_limit": number | null,"cost": Json | null,"cost_total": number,"created_at": string,"deployment_id": string | null,"deployment_version": number | null,"duration_ms": number | null,"ended_at": string | null,"error_code": string | null,"error_message": string | null,"failed_block": Json | null,"files": Json | null,"id": string,"input": Json | null,"lease_expires_at": string | null,"level": Database["public"]['Enums']["workflow_log_level"],"max_attempts": number,"mode": Database["public"]['Enums']["workflow_run_mode"],"output": Json | null,"park_attempt": number,"parked_until": string | null,"priority": number,"queue_message_id": number | null,"rerun_from_block": string | null,"rerun_of": string | null,"response": Json | null,"snapshot_id": string | null,"started_at": string | null,"status": Database["public"]['Enums']["workflow_run_status"],"trace_id": string,"trace_parent_span_id": string | null,"trace_span_id": string,"trace_spans": Json | null,"trace_state": string | null,"trigger": Database["public"]['Enums']["workflow_trigger"],"trigger_block_id": string | null,"triggered_by": string | null,"waited_ms": number,"waiting_since": string | null,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "api_key_id"?: string | null,"attempt"?: number,"billing_account_id": string,"cancel_reason"?: string | null,"cancel_requested_at"?: string | null,"cancel_requested_by"?: Json | null,"concurrency_key"?: string | null,"concurrency_key_limit"?: number | null,"cost"?: Json | null,"cost_total"?: number,"created_at"?: string,"deployment_id"?: string | null,"deployment_version"?: number | null,"duration_ms"?: number | null,"ended_at"?: string | null,"error_code"?: string | null,"error_message"?: string | null,"failed_block"?: Json | null,"files"?: Json | null,"id"?: string,"input"?: Json | null,"lease_expires_at"?: string | null,"level"?: Database["public"]['Enums']["workflow_log_level"],"max_attempts"?: number,"mode": Database["public"]['Enums']["workflow_run_mode"],"output"?: Json | null,"park_attempt"?: number,"parked_until"?: string | null,"priority"?: number,"queue_message_id"?: number | null,"rerun_from_block"?: string | null,"rerun_of"?: string | null,"response"?: Json | null,"snapshot_id"?: string | null,"started_at"?: string | null,"status": Database["public"]['Enums']["workflow_run_status"],"trace_id"?: string,"trace_parent_span_id"?: string | null,"trace_span_id"?: string,"trace_spans"?: Json | null,"trace_state"?: string | null,"trigger": Database["public"]['Enums']["workflow_trigger"],"trigger_block_id"?: string | null,"triggered_by"?: string | null,"waited_ms"?: number,"waiting_since"?: string | null,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "api_key_id"?: string | null,"attempt"?: number,"billing_account_id"?: string,"cancel_reason"?: string | null,"cancel_requested_at"?: string | null,"cancel_requested_by"?: Json | null,"concurrency_key"?: string | null,"concurrency_key_limit"?: number | null,"cost"?: Json | null,"cost_total"?: number,"created_at"?: string,"deployment_id"?: string | null,"deployment_version"?: number | null,"duration_ms"?: number | null,"ended_at"?: string | null,"error_code"?: string | null,"error_message"?: string | null,"failed_block"?: Json | null,"files"?: Json | null,"id"?: string,"input"?: Json | null,"lease_expires_at"?: string | null,"level"?: Database["public"]['Enums']["workflow_log_level"],"max_attempts"?: number,"mode"?: Database["public"]['Enums']["workflow_run_mode"],"output"?: Json | null,"park_attempt"?: number,"parked_until"?: string | null,"priority"?: number,"queue_message_id"?: number | null,"rerun_from_block"?: string | null,"rerun_of"?: string | null,"response"?: Json | null,"snapshot_id"?: string | null,"started_at"?: string | null,"status"?: Database["public"]['Enums']["workflow_run_status"],"trace_id"?: string,"trace_parent_span_id"?: string | null,"trace_span_id"?: string,"trace_spans"?: Json | null,"trace_state"?: string | null,"trigger"?: Database["public"]['Enums']["workflow_trigger"],"trigger_block_id"?: string | null,"triggered_by"?: string | null,"waited_ms"?: number,"waiting_since"?: string | null,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_executions_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_schedule_runs": {
                  Row: {
                    "block_id": string,"cancelled_execution_id": string | null,"execution_id": string | null,"fired_at": string,"jitter_seconds": number | null,"outcome": string,"reason": string | null,"scheduled_for": string,"source": string,"starts_at": string | null,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "block_id": string,"cancelled_execution_id"?: string | null,"execution_id"?: string | null,"fired_at": string,"jitter_seconds"?: number | null,"outcome": string,"reason"?: string | null,"scheduled_for": string,"source"?: string,"starts_at"?: string | null,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "block_id"?: string,"cancelled_execution_id"?: string | null,"execution_id"?: string | null,"fired_at"?: string,"jitter_seconds"?: number | null,"outcome"?: string,"reason"?: string | null,"scheduled_for"?: string,"source"?: string,"starts_at"?: string | null,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_schedule_runs_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_schedules": {
                  Row: {
                    "block_id": string,"block_name": string,"consecutive_failures": number,"created_at": string,"cron_expression": string,"deployment_id": string,"id": string,"jitter_seconds": number,"last_execution_id": string | null,"last_run_at": string | null,"max_consecutive_failures": number,"next_run_at": string | null,"overlap": string,"paused_at": string | null,"paused_reason": string | null,"status": Database["public"]['Enums']["workflow_schedule_status"],"timezone": string,"updated_at": string,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "block_id": string,"block_name": string,"consecutive_failures"?: number,"created_at"?: string,"cron_expression": string,"deployment_id": string,"id"?: string,"jitter_seconds"?: number,"last_execution_id"?: string | null,"last_run_at"?: string | null,"max_consecutive_failures"?: number,"next_run_at"?: string | null,"overlap"?: string,"paused_at"?: string | null,"paused_reason"?: string | null,"status"?: Database["public"]['Enums']["workflow_schedule_status"],"timezone": string,"updated_at"?: string,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "block_id"?: string,"block_name"?: string,"consecutive_failures"?: number,"created_at"?: string,"cron_expression"?: string,"deployment_id"?: string,"id"?: string,"jitter_seconds"?: number,"last_execution_id"?: string | null,"last_run_at"?: string | null,"max_consecutive_failures"?: number,"next_run_at"?: string | null,"overlap"?: string,"paused_at"?: string | null,"paused_reason"?: string | null,"status"?: Database["public"]['Enums']["workflow_schedule_status"],"timezone"?: string,"updated_at"?: string,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_schedules_deployment_id_fkey"
      columns: ["deployment_id"]
isOneToOne: false
      referencedRelation: "workflow_deployments"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_schedules_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflow_trace_exporters": {
                  Row: {
                    "created_at": string,"created_by": string | null,"dropped_spans": number,"enabled": boolean,"endpoint": string,"exported_spans": number,"header_names": (string)[],"headers": Json | null,"last_error": string | null,"last_error_at": string | null,"last_exported_at": string | null,"updated_at": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"created_by"?: string | null,"dropped_spans"?: number,"enabled"?: boolean,"endpoint": string,"exported_spans"?: number,"header_names"?: (string)[],"headers"?: Json | null,"last_error"?: string | null,"last_error_at"?: string | null,"last_exported_at"?: string | null,"updated_at"?: string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"created_by"?: string | null,"dropped_spans"?: number,"enabled"?: boolean,"endpoint"?: string,"exported_spans"?: number,"header_names"?: (string)[],"headers"?: Json | null,"last_error"?: string | null,"last_error_at"?: string | null,"last_exported_at"?: string | null,"updated_at"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_trace_exporters_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: true
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"workflow_webhooks": {
                  Row: {
                    "block_id": string,"created_at": string,"deployment_id": string,"path": string,"require_auth": boolean,"secret_header_name": string | null,"workflow_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "block_id": string,"created_at"?: string,"deployment_id": string,"path": string,"require_auth": boolean,"secret_header_name"?: string | null,"workflow_id": string,"workspace_id": string
                  }
                  Update: {
                    "block_id"?: string,"created_at"?: string,"deployment_id"?: string,"path"?: string,"require_auth"?: boolean,"secret_header_name"?: string | null,"workflow_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflow_webhooks_deployment_id_fkey"
      columns: ["deployment_id"]
isOneToOne: false
      referencedRelation: "workflow_deployments"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflow_webhooks_workspace_id_workflow_id_fkey"
      columns: ["workspace_id","workflow_id"]
isOneToOne: false
      referencedRelation: "workflows"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workflows": {
                  Row: {
                    "created_at": string,"created_by": string | null,"description": string,"folder_id": string | null,"id": string,"name": string,"state": NonNullable<Json>,"updated_at": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"created_by"?: string | null,"description"?: string,"folder_id"?: string | null,"id"?: string,"name": string,"state"?: NonNullable<Json>,"updated_at"?: string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"created_by"?: string | null,"description"?: string,"folder_id"?: string | null,"id"?: string,"name"?: string,"state"?: NonNullable<Json>,"updated_at"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workflows_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    },{
      foreignKeyName: "workflows_workspace_id_folder_id_fkey"
      columns: ["workspace_id","folder_id"]
isOneToOne: false
      referencedRelation: "folders"
      referencedColumns: ["workspace_id","id"]
    }
                  ]
                },"workspace_invitations": {
                  Row: {
                    "created_at": string,"invited_by": string | null,"role": string,"user_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"invited_by"?: string | null,"role": string,"user_id": string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"invited_by"?: string | null,"role"?: string,"user_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workspace_invitations_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"workspace_log_retention": {
                  Row: {
                    "log_retention_days": number,"updated_at": string,"updated_by": string | null,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "log_retention_days": number,"updated_at"?: string,"updated_by"?: string | null,"workspace_id": string
                  }
                  Update: {
                    "log_retention_days"?: number,"updated_at"?: string,"updated_by"?: string | null,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workspace_log_retention_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: true
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"workspace_members": {
                  Row: {
                    "created_at": string,"role": string,"user_id": string,"workspace_id": string
                  }
                  ComputedFields: never
                  Insert: {
                    "created_at"?: string,"role": string,"user_id": string,"workspace_id": string
                  }
                  Update: {
                    "created_at"?: string,"role"?: string,"user_id"?: string,"workspace_id"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workspace_members_workspace_id_fkey"
      columns: ["workspace_id"]
isOneToOne: false
      referencedRelation: "workspaces"
      referencedColumns: ["id"]
    }
                  ]
                },"workspaces": {
                  Row: {
                    "billing_account_id": string,"created_at": string,"created_by": string | null,"id": string,"name": string,"updated_at": string
                  }
                  ComputedFields: never
                  Insert: {
                    "billing_account_id": string,"created_at"?: string,"created_by"?: string | null,"id"?: string,"name": string,"updated_at"?: string
                  }
                  Update: {
                    "billing_account_id"?: string,"created_at"?: string,"created_by"?: string | null,"id"?: string,"name"?: string,"updated_at"?: string
                  }
                  Relationships: [
                    {
      foreignKeyName: "workspaces_billing_account_id_fkey"
      columns: ["billing_account_id"]
isOneToOne: false
      referencedRelation: "billing_accounts"
      referencedColumns: ["id"]
    }
                  ]
                }
          }
          Views: {
            [_ in never]: never
          }
          Functions: {
            "accept_workspace_invitation":
{ Args: { "p_workspace_id": string }; Returns: {
              "created_at": string,
"role": string,
"user_id": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "workspace_members"
        isOneToOne: true
        isSetofReturn: false
      } },
"ack_workflow_approval_mail":
{ Args: { "p_message_ids": (number)[] }; Returns: undefined
                           },
"activate_deployment":
{ Args: { "p_version": number,"p_workflow_id": string }; Returns: {
              "activated_at": string | null,
"created_at": string,
"created_by": string | null,
"flow_control": Json | null,
"id": string,
"is_active": boolean,
"note": string | null,
"state": NonNullable<Json>,
"version": number,
"workflow_id": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "workflow_deployments"
        isOneToOne: true
        isSetofReturn: false
      } },
"admit_chat_run":
{ Args: { "p_cached_deployment_ids"?: (string)[],"p_conversation_id": string,"p_environment_version"?: number,"p_history_turns"?: number,"p_identifier": string,"p_lease_seconds"?: number,"p_message": string,"p_session": Json,"p_trace"?: Json }; Returns: Json
                           },
"admit_trigger_run":
{ Args: { "p_cached_deployment_ids"?: (string)[],"p_environment_version"?: number,"p_idempotency_key"?: string,"p_input"?: Json,"p_lease_seconds"?: number,"p_mode"?: string,"p_request_hash"?: string,"p_trace"?: Json,"p_trigger": string,"p_trigger_block_id": string,"p_workflow_id": string }; Returns: Json
                           },
"admit_workflow_run":
{ Args: { "p_api_key"?: string,"p_cached_deployment_ids"?: (string)[],"p_environment_version"?: number,"p_idempotency_key"?: string,"p_input"?: Json,"p_lease_seconds"?: number,"p_mode"?: string,"p_request_hash"?: string,"p_rerun_from_block"?: string,"p_rerun_of"?: string,"p_trace"?: Json,"p_trigger"?: string,"p_user_id"?: string,"p_workflow_id"?: string }; Returns: Json
                           },
"backfill_workflow_schedule":
{ Args: { "p_from": string,"p_schedule_id": string,"p_to": string }; Returns: Json
                           },
"calculate_payment_dates":
{ Args: { "sale_date": string }; Returns: Record<string, unknown>
                           },
"cancel_workflow_run":
{ Args: { "p_api_key"?: string,"p_execution_id": string,"p_reason"?: string,"p_user_id"?: string }; Returns: Json
                           },
"chat_password_login":
{ Args: { "p_client": string,"p_identifier": string,"p_now"?: string,"p_password": string }; Returns: Json
                           },
"chat_request_code":
{ Args: { "p_email": string,"p_identifier": string,"p_now"?: string }; Returns: Json
                           },
"chat_session_active":
{ Args: { "p_identifier": string,"p_now"?: string,"p_session_id": string }; Returns: boolean
                           },
"chat_target":
{ Args: { "p_identifier": string }; Returns: Json
                           },
"chat_verify_code":
{ Args: { "p_client": string,"p_code": string,"p_email": string,"p_identifier": string,"p_now"?: string }; Returns: Json
                           },
"claim_alert_deliveries":
{ Args: { "p_batch_size"?: number,"p_visibility_timeout"?: number }; Returns: Json
                           },
"claim_trace_exports":
{ Args: { "p_batch_size"?: number,"p_visibility_timeout"?: number }; Returns: Json
                           },
"claim_webhook_deliveries":
{ Args: { "p_batch_size"?: number,"p_visibility_timeout"?: number }; Returns: Json
                           },
"claim_workflow_approval_mail":
{ Args: { "p_batch_size": number,"p_visibility_seconds": number }; Returns: Json
                           },
"claim_workflow_runs":
{ Args: { "p_batch_size"?: number,"p_cached_deployment_ids"?: (string)[],"p_environment_versions"?: Json,"p_lease_seconds"?: number }; Returns: Json
                           },
"claim_workspace_file_sweeps":
{ Args: { "p_batch_size": number,"p_visibility_seconds": number }; Returns: Json
                           },
"create_api_key":
{ Args: { "p_name": string,"p_workspace_id"?: string }; Returns: Database["public"]['CompositeTypes']["created_api_key"]
                          SetofOptions: {
        from: "*"
        to: "created_api_key"
        isOneToOne: true
        isSetofReturn: false
      } },
"create_workspace":
{ Args: { "p_billing_account_id"?: string,"p_name": string }; Returns: {
              "billing_account_id": string,
"created_at": string,
"created_by": string | null,
"id": string,
"name": string,
"updated_at": string
            }
                          SetofOptions: {
        from: "*"
        to: "workspaces"
        isOneToOne: true
        isSetofReturn: false
      } },
"deleted_workspace_file_names":
{ Args: { "p_limit"?: number,"p_workspace_id": string }; Returns: (string)[]
                           },
"deploy_chat":
{ Args: { "p_allowed_emails"?: (string)[],"p_auth_type"?: string,"p_description"?: string,"p_identifier": string,"p_outputs"?: (string)[],"p_password"?: string,"p_title": string,"p_welcome_message"?: string,"p_workflow_id": string }; Returns: Json
                           },
"deploy_workflow":
{ Args: { "p_note"?: string,"p_workflow_id": string }; Returns: {
              "activated_at": string | null,
"created_at": string,
"created_by": string | null,
"flow_control": Json | null,
"id": string,
"is_active": boolean,
"note": string | null,
"state": NonNullable<Json>,
"version": number,
"workflow_id": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "workflow_deployments"
        isOneToOne: true
        isSetofReturn: false
      } },
"diff_workflow_deployment":
{ Args: { "p_compare_to"?: number,"p_version"?: number,"p_workflow_id": string }; Returns: Json
                           },
"end_chat_session":
{ Args: { "p_identifier": string,"p_session_id": string }; Returns: undefined
                           },
"expire_workflow_approvals":
{ Args: { "p_now"?: string }; Returns: number
                           },
"expired_run_file_names":
{ Args: { "p_execution_ids": (string)[],"p_limit"?: number,"p_workspace_id": string }; Returns: (string)[]
                           },
"finish_workflow_run":
{ Args: { "p_checkpoints"?: Json,"p_duration_ms"?: number,"p_error"?: Json,"p_execution_id": string,"p_files"?: Json,"p_model_usage"?: Json,"p_output"?: Json,"p_response"?: Json,"p_status": string,"p_trace_spans"?: Json }; Returns: Json
                           },
"finish_workspace_file_sweep":
{ Args: { "p_message_id": number }; Returns: boolean
                           },
"gamificacao_badges_usuario":
{ Args: { "p_usuario_id": string }; Returns: Json
                           },
"gamificacao_historico":
{ Args: { "p_dias"?: number,"p_limit"?: number,"p_offset"?: number,"p_usuario_id"?: string }; Returns: Json
                           },
"gamificacao_ranking_categoria":
{ Args: { "p_categoria": string,"p_limit"?: number,"p_offset"?: number,"p_periodo"?: string }; Returns: Json
                           },
"gamificacao_ranking_local":
{ Args: { "p_cidade"?: string,"p_limit"?: number,"p_offset"?: number,"p_periodo"?: string }; Returns: Json
                           },
"gamificacao_ranking_nacional":
{ Args: { "p_limit"?: number,"p_nivel"?: string,"p_offset"?: number,"p_periodo"?: string }; Returns: Json
                           },
"gamificacao_registrar_acao":
{ Args: { "p_acao": string,"p_chamado_id": string,"p_metadata"?: Json,"p_usuario_id": string }; Returns: Json
                           },
"gamificacao_registrar_acoes":
{ Args: { "p_acoes": Json }; Returns: Json
                           },
"generate_approval_token":
{ Args: Record<PropertyKey, never>; Returns: string
                           },
"get_proposal_for_approval":
{ Args: { "_token": string }; Returns: {
              "code": string,"company_name": string,"contact_name": string,"contract_months": number,"expires_at": string,"monthly_value": number,"product_description": string,"product_name": string,"responded_at": string,"status": Database["public"]['Enums']["proposal_status"],"technician_name": string,"token_state": string,"total_value": number
            }[]
                           },
"has_role":
{ Args: { "_role": Database["public"]['Enums']["app_role"],"_user_id": string }; Returns: boolean
                           },
"heartbeat_workflow_run":
{ Args: { "p_attempt"?: number,"p_execution_id": string,"p_lease_seconds"?: number }; Returns: Json
                           },
"issue_approval_token":
{ Args: { "_proposal_id": string }; Returns: string
                           },
"my_workspace_role":
{ Args: { "p_workspace_id": string }; Returns: string
                           },
"open_workflow_approval":
{ Args: { "p_attempt": number,"p_block": Json,"p_execution_id": string,"p_key": string,"p_now"?: string,"p_request": Json }; Returns: Json
                           },
"park_workflow_run":
{ Args: { "p_attempt": number,"p_execution_id": string,"p_resume_at": string }; Returns: Json
                           },
"password_reset_refusal":
{ Args: { "p_target": string }; Returns: string
                           },
"pause_sync_workflow_run":
{ Args: { "p_attempt": number,"p_checkpoints": Json,"p_execution_id": string,"p_response": Json,"p_resume_at": string }; Returns: Json
                           },
"preview_schedule":
{ Args: { "p_after"?: string,"p_count"?: number,"p_cron_expression": string,"p_timezone"?: string }; Returns: (string)[]
                           },
"price_model_usage":
{ Args: { "p_at"?: string,"p_usage": Json }; Returns: Json
                           },
"proposal_document":
{ Args: { "p_proposal_id": string }; Returns: Json
                           },
"record_alert_deliveries":
{ Args: { "p_results": Json }; Returns: number
                           },
"record_chat_turn":
{ Args: { "p_answer": string,"p_chat_id": string,"p_conversation_id": string,"p_execution_id": string,"p_message": string,"p_subject": string }; Returns: undefined
                           },
"record_trace_exports":
{ Args: { "p_report": Json }; Returns: undefined
                           },
"record_webhook_attempts":
{ Args: { "p_attempts": Json }; Returns: number
                           },
"record_workflow_checkpoint":
{ Args: { "p_attempt": number,"p_checkpoint": Json,"p_execution_id": string }; Returns: Json
                           },
"redeliver_failed_webhooks":
{ Args: { "p_since"?: string,"p_subscription_id": string,"p_until"?: string }; Returns: number
                           },
"redeliver_webhook":
{ Args: { "p_delivery_id": string }; Returns: {
              "attempt_started_at": string | null,
"attempts": number,
"created_at": string,
"delivered_at": string | null,
"execution_id": string,
"failed_at": string | null,
"id": string,
"last_attempt_at": string | null,
"last_error": string | null,
"last_response_excerpt": string | null,
"last_status_code": number | null,
"message_id": number | null,
"next_attempt_at": string | null,
"redeliveries": number,
"round_attempts": number,
"status": Database["public"]['Enums']["webhook_delivery_status"],
"subscription_id": string,
"workflow_id": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "webhook_deliveries"
        isOneToOne: true
        isSetofReturn: false
      } },
"remind_workflow_approvals":
{ Args: { "p_now"?: string }; Returns: number
                           },
"respond_to_proposal":
{ Args: { "_action": string,"_email": string,"_token": string }; Returns: Record<string, unknown>
                           },
"respond_workflow_approval":
{ Args: { "p_comment"?: string,"p_decision": string,"p_email": string,"p_fields"?: Json,"p_now"?: string,"p_token": string }; Returns: Json
                           },
"resume_workflow_run":
{ Args: { "p_api_key": string,"p_context_id": string,"p_input": Json,"p_now"?: string,"p_run_id": string,"p_workflow_id": string }; Returns: Json
                           },
"resume_workflow_schedule":
{ Args: { "p_schedule_id": string }; Returns: {
              "block_id": string,
"block_name": string,
"consecutive_failures": number,
"created_at": string,
"cron_expression": string,
"deployment_id": string,
"id": string,
"jitter_seconds": number,
"last_execution_id": string | null,
"last_run_at": string | null,
"max_consecutive_failures": number,
"next_run_at": string | null,
"overlap": string,
"paused_at": string | null,
"paused_reason": string | null,
"status": Database["public"]['Enums']["workflow_schedule_status"],
"timezone": string,
"updated_at": string,
"workflow_id": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "workflow_schedules"
        isOneToOne: true
        isSetofReturn: false
      } },
"revoke_api_key":
{ Args: { "p_id": string }; Returns: {
              "created_at": string,
"created_by": string | null,
"id": string,
"last_used_at": string | null,
"name": string,
"prefix": string,
"revoked_at": string | null,
"user_id": string | null,
"workspace_id": string | null
            }
                          SetofOptions: {
        from: "*"
        to: "api_keys"
        isOneToOne: true
        isSetofReturn: false
      } },
"set_environment_variable":
{ Args: { "p_name": string,"p_value": string,"p_workspace_id": string }; Returns: {
              "created_at": string,
"created_by": string | null,
"id": string,
"name": string,
"updated_at": string,
"workspace_id": string
            }
                          SetofOptions: {
        from: "*"
        to: "environment_variables"
        isOneToOne: true
        isSetofReturn: false
      } },
"undeploy_chat":
{ Args: { "p_workflow_id": string }; Returns: undefined
                           },
"undeploy_workflow":
{ Args: { "p_workflow_id": string }; Returns: undefined
                           },
"validate_workflow_state":
{ Args: { "p_mode"?: string,"p_state": Json }; Returns: Json
                           },
"waiting_workflow_approvals":
{ Args: { "p_limit"?: number }; Returns: Json
                           },
"webhook_trigger_target":
{ Args: { "p_path": string }; Returns: Json
                           },
"workflow_approval_for_token":
{ Args: { "p_now"?: string,"p_token": string }; Returns: Json
                           },
"workflow_deployment_status":
{ Args: { "p_api_key"?: string,"p_user_id"?: string,"p_workflow_id": string }; Returns: Json
                           },
"workflow_execution_detail":
{ Args: { "p_api_key": string,"p_execution_id": string }; Returns: Json
                           },
"workflow_job_status":
{ Args: { "p_api_key"?: string,"p_execution_id": string,"p_user_id"?: string }; Returns: Json
                           },
"workflow_log_detail":
{ Args: { "p_api_key": string,"p_id": string }; Returns: Json
                           },
"workflow_logs":
{ Args: { "p_api_key": string,"p_cursor_id"?: string,"p_cursor_started_at"?: string,"p_details"?: string,"p_end_date"?: string,"p_execution_id"?: string,"p_folder_ids"?: (string)[],"p_include_final_output"?: boolean,"p_include_trace_spans"?: boolean,"p_level"?: string,"p_limit"?: number,"p_max_cost"?: number,"p_max_duration_ms"?: number,"p_min_cost"?: number,"p_min_duration_ms"?: number,"p_model"?: string,"p_order"?: string,"p_start_date"?: string,"p_triggers"?: (string)[],"p_workflow_ids"?: (string)[],"p_workspace_id": string }; Returns: Json
                           },
"workflow_logs_json":
{ Args: { "p_api_key": string,"p_cursor_id"?: string,"p_cursor_started_at"?: string,"p_details"?: string,"p_end_date"?: string,"p_execution_id"?: string,"p_folder_ids"?: (string)[],"p_include_final_output"?: boolean,"p_include_trace_spans"?: boolean,"p_level"?: string,"p_limit"?: number,"p_max_cost"?: number,"p_max_duration_ms"?: number,"p_min_cost"?: number,"p_min_duration_ms"?: number,"p_model"?: string,"p_order"?: string,"p_start_date"?: string,"p_triggers"?: (string)[],"p_workflow_ids"?: (string)[],"p_workspace_id": string }; Returns: Json
                           },
"workflow_run_cancel":
{ Args: { "p_api_key": string,"p_reason"?: string,"p_run_id": string,"p_workflow_id"?: string }; Returns: Json
                           },
"workflow_run_detail":
{ Args: { "p_api_key": string,"p_run_id": string,"p_workflow_id"?: string }; Returns: Json
                           },
"workflow_runs":
{ Args: { "p_api_key": string,"p_cursor_created_at"?: string,"p_cursor_id"?: string,"p_end_date"?: string,"p_limit"?: number,"p_order"?: string,"p_start_date"?: string,"p_status"?: string,"p_trigger"?: string,"p_workflow_id"?: string,"p_workspace_id"?: string }; Returns: Json
                           },
"workflow_runs_cancel":
{ Args: { "p_api_key": string,"p_end_date"?: string,"p_limit"?: number,"p_reason"?: string,"p_start_date"?: string,"p_status"?: string,"p_trigger"?: string,"p_workflow_id"?: string,"p_workspace_id"?: string }; Returns: Json
                           },
"workflow_usage_limits":
{ Args: { "p_api_key"?: string,"p_user_id"?: string }; Returns: Json
                           },
"workspace_environment":
{ Args: { "p_workspace_id": string }; Returns: Json
                           }
          }
          Enums: {
            "app_role": "super_admin"|"admin"|"technician","chat_auth_type": "public"|"password"|"email","commission_status": "pending"|"paid"|"cancelled","order_status": "active"|"cancelled","proposal_status": "pending"|"approved"|"rejected"|"active"|"cancelled","usage_charge_kind": "execution"|"models","webhook_attempt_outcome": "delivered"|"retry"|"failed"|"interrupted","webhook_delivery_status": "pending"|"delivered"|"failed","workflow_alert_channel": "email"|"webhook","workflow_alert_delivery": "pending"|"sent"|"failed","workflow_alert_kind": "consecutive_failures"|"failure_rate"|"p95_duration"|"cost_per_run"|"no_runs","workflow_alert_source": "rule"|"schedule_paused"|"subscription_switched_off","workflow_log_level": "info"|"error","workflow_run_mode": "sync"|"async","workflow_run_status": "queued"|"running"|"completed"|"failed"|"cancelled","workflow_schedule_status": "active"|"paused","workflow_trigger": "manual"|"api"|"webhook"|"schedule"|"chat"
          }
          CompositeTypes: {
            "created_api_key": {
                        "id": string | null,"key": string | null,"prefix": string | null
                      }
          }
        }
}

type DatabaseWithoutInternals = Omit<Database, '__InternalSupabase'>

type DefaultSchema = DatabaseWithoutInternals[Extract<keyof Database, "public">]

export type Tables<
  DefaultSchemaTableNameOrOptions extends
    | keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
        DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])
    : never = never
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
      DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])[TableName] extends {
      Row: infer R
    }
    ? R
    : never
  : DefaultSchemaTableNameOrOptions extends keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
  ? (DefaultSchema["Tables"] & DefaultSchema["Views"])[DefaultSchemaTableNameOrOptions] extends {
      Row: infer R
    }
    ? R
    : never
  : never

export type TablesInsert<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Insert: infer I
    }
    ? I
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
  ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Insert: infer I
    }
    ? I
    : never
  : never

export type TablesUpdate<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Update: infer U
    }
    ? U
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
  ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Update: infer U
    }
    ? U
    : never
  : never

export type Enums<
  DefaultSchemaEnumNameOrOptions extends
    | keyof DefaultSchema["Enums"]
    | { schema: keyof DatabaseWithoutInternals },
  EnumName extends DefaultSchemaEnumNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"]
    : never = never
> = DefaultSchemaEnumNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"][EnumName]
  : DefaultSchemaEnumNameOrOptions extends keyof DefaultSchema["Enums"]
  ? DefaultSchema["Enums"][DefaultSchemaEnumNameOrOptions]
  : never

export type CompositeTypes<
  PublicCompositeTypeNameOrOptions extends
    | keyof DefaultSchema["CompositeTypes"]
    | { schema: keyof DatabaseWithoutInternals },
  CompositeTypeName extends PublicCompositeTypeNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"]
    : never = never
> = PublicCompositeTypeNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"][CompositeTypeName]
  : PublicCompositeTypeNameOrOptions extends keyof DefaultSchema["CompositeTypes"]
  ? DefaultSchema["CompositeTypes"][PublicCompositeTypeNameOrOptions]
  : never

export const Constants = {
  "public": {
          Enums: {
            "app_role": ["super_admin", "admin", "technician"],"chat_auth_type": ["public", "password", "email"],"commission_status": ["pending", "paid", "cancelled"],"order_status": ["active", "cancelled"],"proposal_status": ["pending", "approved", "rejected", "active", "cancelled"],"usage_charge_kind": ["execution", "models"],"webhook_attempt_outcome": ["delivered", "retry", "failed", "interrupted"],"webhook_delivery_status": ["pending", "delivered", "failed"],"workflow_alert_channel": ["email", "webhook"],"workflow_alert_delivery": ["pending", "sent", "failed"],"workflow_alert_kind": ["consecutive_failures", "failure_rate", "p95_duration", "cost_per_run", "no_runs"],"workflow_alert_source": ["rule", "schedule_paused", "subscription_switched_off"],"workflow_log_level": ["info", "error"],"workflow_run_mode": ["sync", "async"],"workflow_run_status": ["queued", "running", "completed", "failed", "cancelled"],"workflow_schedule_status": ["active", "paused"],"workflow_trigger": ["manual", "api", "webhook", "schedule", "chat"]
          }
        }
} as const
